// Test helper (GPU builds): an embedded view (view_testing.h) copied to
// the device whole, buffer and all, with the same view of the copy; read
// back densely.
//
//   Embedded<float> x = embed<float>(extent, rng, /*dense=*/false);
//   DeviceView<float> xd(x);
//   kernel(xd.view, ...);
//   std::vector<float> cells = xd.cells(x);    // the view's cells, dense
#ifndef DISTCONV_KERNELS_DEVICE_VIEW_TESTING_H_
#define DISTCONV_KERNELS_DEVICE_VIEW_TESTING_H_

#include <vector>

#include "distconv/device_space.h"
#include "distconv/strided_view.h"
#include "kernels/view_testing.h"
#include "tests/device_array.h"

namespace distconv::testing {

// The embedded view's buffer on the device, and the same view of it.
template <typename T>
struct DeviceView {
  DeviceArray<T> buffer;
  StridedView<T, DeviceSpace> view;
  explicit DeviceView(const Embedded<T>& e)
      : buffer(e.buffer),
        view(buffer.data + (e.view.data() - e.buffer.data()), e.view.extent(),
             e.view.strides()) {}
  // The view's cells, densely, on the host.
  std::vector<T> cells(const Embedded<T>& like) const {
    std::vector<T> host = buffer.read();
    return dense_of(
        StridedView<T>(host.data() + (like.view.data() - like.buffer.data()),
                       view.extent(), view.strides()));
  }
};

}  // namespace distconv::testing

#endif  // DISTCONV_KERNELS_DEVICE_VIEW_TESTING_H_
