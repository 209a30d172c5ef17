#include "kernels/cuda/upsample_kernels.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/grid_stride.h"

namespace distconv {
namespace {

using internal::for_each_element;
using internal::grid_stride_blocks;
using internal::kThreadsPerBlock;

// The cell of element e of a walk over `g` with channels fastest (the
// channels-last order: consecutive threads read consecutive channels).
struct Cell {
  std::int64_t n, c, i[3];
};

__device__ Cell cell_of(const UpsampleGeometry& g, std::int64_t e) {
  Cell out;
  out.c = e % g.c;
  e /= g.c;
  out.i[2] = e % g.s[2];
  e /= g.s[2];
  out.i[1] = e % g.s[1];
  e /= g.s[1];
  out.i[0] = e % g.s[0];
  out.n = e / g.s[0];
  return out;
}

// No __restrict__: with every factor 1 a pass may run in place (each
// thread then reads and writes its own cell).
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    forward_kernel(UpsampleFactors f, UpsampleGeometry xs,
                   const T* x, UpsampleGeometry ys,
                   T* y, std::int64_t n) {
  for_each_element(n, [&](std::int64_t e) {
    const Cell o = cell_of(ys, e);
    y[ys.offset(o.n, o.c, o.i[0], o.i[1], o.i[2])] =
        x[xs.offset(o.n, o.c, o.i[0] / f.f[0], o.i[1] / f.f[1],
                    o.i[2] / f.f[2])];
  });
}

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    backward_kernel(UpsampleFactors f, UpsampleGeometry dys,
                    const T* dy, UpsampleGeometry dxs,
                    T* dx, std::int64_t n) {
  for_each_element(n, [&](std::int64_t e) {
    using A = Compute<T>;  // bf16 sums in fp32, rounded once (as the host)
    const Cell in = cell_of(dxs, e);
    A sum = A(0);
    bool first = true;
    for (std::int64_t k0 = 0; k0 < f.f[0]; ++k0)
      for (std::int64_t k1 = 0; k1 < f.f[1]; ++k1)
        for (std::int64_t k2 = 0; k2 < f.f[2]; ++k2) {
          const A v = A(dy[dys.offset(in.n, in.c, in.i[0] * f.f[0] + k0,
                                      in.i[1] * f.f[1] + k1,
                                      in.i[2] * f.f[2] + k2)]);
          sum = first ? v : A(sum + v);
          first = false;
        }
    dx[dxs.offset(in.n, in.c, in.i[0], in.i[1], in.i[2])] = T(sum);
  });
}

}  // namespace

template <typename T>
void launch_upsample_forward(const UpsampleFactors& f,
                             const UpsampleGeometry& src_shape, const T* src,
                             const UpsampleGeometry& dst_shape, T* dst,
                             CUstream_st* stream) {
  const std::int64_t n = dst_shape.volume();
  if (n == 0) return;
  forward_kernel<T><<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      f, src_shape, src, dst_shape, dst, n);
  internal::check_cuda(cudaGetLastError(), "the GPU upsampling launch");
}

template <typename T>
void launch_upsample_backward(const UpsampleFactors& f,
                              const UpsampleGeometry& diff_dst_shape,
                              const T* diff_dst,
                              const UpsampleGeometry& diff_src_shape,
                              T* diff_src, CUstream_st* stream) {
  const std::int64_t n = diff_src_shape.volume();
  if (n == 0) return;
  backward_kernel<T><<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(
      f, diff_dst_shape, diff_dst, diff_src_shape, diff_src, n);
  internal::check_cuda(cudaGetLastError(),
                       "the GPU upsampling backward launch");
}

#define DISTCONV_INSTANTIATE(T)                                             \
  template void launch_upsample_forward<T>(                                 \
      const UpsampleFactors&, const UpsampleGeometry&, const T*,           \
      const UpsampleGeometry&, T*, CUstream_st*);                           \
  template void launch_upsample_backward<T>(                                \
      const UpsampleFactors&, const UpsampleGeometry&, const T*,           \
      const UpsampleGeometry&, T*, CUstream_st*);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
