#include "kernels/cuda/pool.h"

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/cuda/pool_kernels.h"

namespace distconv {

template <typename T>
CudaPool<T>::CudaPool(const PoolDesc& desc, const Shape& src_extent,
                      const Shape& src_strides, const Shape& dst_extent,
                      const Shape& dst_strides, CUstream_st* stream)
    : window_(make_pool_window(desc, src_extent, src_strides, dst_extent,
                               dst_strides)),
      src_extent_(src_extent),
      src_strides_(src_strides),
      dst_extent_(dst_extent),
      dst_strides_(dst_strides),
      stream_(stream) {}

template <typename T>
void CudaPool<T>::check(const Shape& src_extent, const Shape& src_strides,
                        const Shape& dst_extent,
                        const Shape& dst_strides) const {
  require(src_extent == src_extent_ && src_strides == src_strides_ &&
              dst_extent == dst_extent_ && dst_strides == dst_strides_,
          ErrorKind::kShapeMismatch, "GPU pooling planned for views ",
          src_extent_, " / ", dst_extent_, " with strides ", src_strides_,
          " / ", dst_strides_, " got ", src_extent, " / ", dst_extent,
          " with strides ", src_strides, " / ", dst_strides);
}

template <typename T>
void CudaPool<T>::forward(StridedView<const T, DeviceSpace> src,
                          StridedView<T, DeviceSpace> dst) const {
  check(src.extent(), src.strides(), dst.extent(), dst.strides());
  launch_pool_forward<T>(window_, src.data(), dst.data(), stream_);
}

template <typename T>
void CudaPool<T>::backward(StridedView<const T, DeviceSpace> src,
                           StridedView<const T, DeviceSpace> diff_dst,
                           StridedView<T, DeviceSpace> diff_src) const {
  check(src.extent(), src.strides(), diff_dst.extent(), diff_dst.strides());
  check(diff_src.extent(), diff_src.strides(), diff_dst.extent(),
        diff_dst.strides());
  launch_pool_backward<T>(window_, src.data(), diff_dst.data(),
                          diff_src.data(), stream_);
}

#define DISTCONV_INSTANTIATE(T) template class CudaPool<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
