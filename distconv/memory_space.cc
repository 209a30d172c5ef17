#include "distconv/memory_space.h"

#include <cstdlib>
#include <cstring>

#include "distconv/error.h"

namespace distconv {

void* HostSpace::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  constexpr std::size_t kAlign = 64;
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  require(p != nullptr, ErrorKind::kInvalidArgument, "cannot allocate ",
          bytes, " bytes of host memory");
  std::memset(p, 0, bytes);
  return p;
}

void HostSpace::deallocate(void* p) noexcept { std::free(p); }

}  // namespace distconv
