// Test helper (GPU builds): a device copy of a host vector, freed with the
// helper, and read back whole.
//
//   testing::DeviceArray<float> w(host_weights);
//   kernel(w.data, ...);
//   std::vector<float> after = w.read();
//
// `offset` places the data that many elements into the allocation (an
// offset of 1 makes the pointer unaligned for 16-byte units).
#ifndef DISTCONV_TESTS_DEVICE_ARRAY_H_
#define DISTCONV_TESTS_DEVICE_ARRAY_H_

#include <algorithm>
#include <cstddef>
#include <vector>

#include "distconv/device_space.h"

namespace distconv::testing {

template <typename T>
struct DeviceArray {
  explicit DeviceArray(const std::vector<T>& host, int offset = 0)
      : base(static_cast<T*>(DeviceSpace::allocate(
            sizeof(T) * std::max<std::size_t>(host.size() + offset, 1)))),
        data(base + offset),
        size(host.size()) {
    DeviceSpace::copy_to_device(data, host.data(), sizeof(T) * size);
  }
  ~DeviceArray() { DeviceSpace::deallocate(base); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  std::vector<T> read() const {
    std::vector<T> out(size);
    DeviceSpace::copy_to_host(out.data(), data, sizeof(T) * size);
    return out;
  }

  T* base;
  T* data;
  std::size_t size;
};

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_DEVICE_ARRAY_H_
