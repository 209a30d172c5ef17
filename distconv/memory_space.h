// Memory spaces: where a DistTensor's buffer lives. A space is a policy
// type with a name, allocate/deallocate and kHostAccessible (whether host
// code may read and write its memory: views give element access only
// then), so the index math of tensors, views and halo plans is written once
// for every space.
//
// HostSpace is ordinary CPU memory; a device space (GPU memory) is added by
// the GPU backend.
#ifndef DISTCONV_MEMORY_SPACE_H_
#define DISTCONV_MEMORY_SPACE_H_

#include <cstddef>

namespace distconv {

struct HostSpace {
  static constexpr const char* kName = "host";
  static constexpr bool kHostAccessible = true;
  // Zero-initialised, 64-byte aligned; throws Error on failure.
  static void* allocate(std::size_t bytes);
  static void deallocate(void* p) noexcept;
};

}  // namespace distconv

#endif  // DISTCONV_MEMORY_SPACE_H_
