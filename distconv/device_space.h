// DeviceSpace: GPU memory (CUDA) as a memory space for DistTensor, plus the
// host <-> device copies tests and I/O need. Built only with --config=cuda
// (target //distconv:device_space); this header includes no CUDA header.
// DeviceBuffer holds a library's scratch arrays on the device.
//
//   if (DeviceSpace::device_count() > 0) {
//     DistTensor<float, DeviceSpace> x(grid, layout);   // zeroed GPU buffer
//     DeviceSpace::copy_to_device(x.data(), host.data(), bytes);
//   }
#ifndef DISTCONV_DEVICE_SPACE_H_
#define DISTCONV_DEVICE_SPACE_H_

#include <cstddef>
#include <memory>

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
  // Makes GPU `rank` % device_count() this process's current device (the
  // ranks of a node take its GPUs round robin, several per GPU where they
  // outnumber them) and returns its number. Throws kUnsupported where
  // there is no GPU, kDevice where it cannot be made current.
  static int use_device_of_rank(int rank);
};

// A zeroed device array of `bytes` bytes (none for 0), freed on
// destruction; move-only. Throws Error as DeviceSpace::allocate does.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes = 0)
      : p_(DeviceSpace::allocate(bytes), &DeviceSpace::deallocate),
        bytes_(bytes) {}
  void* get() const { return p_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<void, void (*)(void*)> p_;
  std::size_t bytes_;
};

}  // namespace distconv

#endif  // DISTCONV_DEVICE_SPACE_H_
