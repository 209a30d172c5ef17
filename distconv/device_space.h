// DeviceSpace: GPU memory (CUDA) as a memory space for DistTensor, plus the
// host <-> device copies tests and I/O need. Built only with --config=cuda
// (target //distconv:device_space); this header includes no CUDA header.
//
//   if (DeviceSpace::device_count() > 0) {
//     DistTensor<float, DeviceSpace> x(grid, layout);   // zeroed GPU buffer
//     DeviceSpace::copy_to_device(x.data(), host.data(), bytes);
//   }
#ifndef DISTCONV_DEVICE_SPACE_H_
#define DISTCONV_DEVICE_SPACE_H_

#include <cstddef>

namespace distconv {

struct DeviceSpace {
  static constexpr const char* kName = "device";
  static constexpr bool kHostAccessible = false;  // views: no element access
  // Zero-initialised memory on the current device; throws Error on failure.
  static void* allocate(std::size_t bytes);
  static void deallocate(void* p) noexcept;
  // Blocking copies; throw Error on failure.
  static void copy_to_device(void* dst, const void* src, std::size_t bytes);
  static void copy_to_host(void* dst, const void* src, std::size_t bytes);
  // Number of usable GPUs; 0 when there is no device or no driver.
  static int device_count() noexcept;
};

}  // namespace distconv

#endif  // DISTCONV_DEVICE_SPACE_H_
