// CudaPool<T>: one local pooling (a rank's window) on strided views of GPU
// memory, planned once: the GPU's LocalPool. Its kernels run
// pool_window.h's per-cell functions, one thread per output cell forward
// and one per input-gradient cell backward (a gather, no atomics), so
// their results are the reference loops' bit for bit and the same from run
// to run: max pooling's ties go to the window's first cell and a NaN
// propagates, as on the host. Threads walk channels fastest, so a
// channels-last tensor is read and written in coalesced runs. Any kernel,
// stride and (asymmetric) padding, 2D and 3D, any strides, in place. Max
// pooling's backward finds each window's maximum again from src (which
// must be what forward read), so there is no workspace.
//
//   CudaPool<float> pool(window_desc, src.extent(), src.strides(),
//                        dst.extent(), dst.strides(), stream);
//   pool.forward(src, dst);                      // queued on stream
//   pool.backward(src, diff_dst, diff_src);      // overwrites diff_src
//
// Calls are asynchronous on the stream given; views must stay valid until
// it has run them. Defined for every element type of distconv/element_types.h.
// Built only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_POOL_H_
#define DISTCONV_KERNELS_CUDA_POOL_H_

#include <string>

#include "distconv/device_space.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/cuda/pool_window.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

template <typename T>
class CudaPool {
 public:
  // `desc` carries the window's padding (none circular); extents are (n,
  // C, spatial...), strides the element strides the views will have (src's
  // also serve diff_src, dst's diff_dst); other views throw
  // kShapeMismatch. `stream`: null is the legacy default stream.
  CudaPool(const PoolDesc& desc, const Shape& src_extent,
           const Shape& src_strides, const Shape& dst_extent,
           const Shape& dst_strides, CUstream_st* stream);

  std::string implementation() const { return "cuda direct"; }

  void forward(StridedView<const T, DeviceSpace> src,
               StridedView<T, DeviceSpace> dst) const;
  // Overwrites diff_src (cells no window reads get 0).
  void backward(StridedView<const T, DeviceSpace> src,
                StridedView<const T, DeviceSpace> diff_dst,
                StridedView<T, DeviceSpace> diff_src) const;

 private:
  void check(const Shape& src_extent, const Shape& src_strides,
             const Shape& dst_extent, const Shape& dst_strides) const;

  PoolWindow window_;
  Shape src_extent_, src_strides_, dst_extent_, dst_strides_;
  CUstream_st* stream_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_POOL_H_
