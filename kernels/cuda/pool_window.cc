#include "kernels/cuda/pool_window.h"

#include "distconv/error.h"

namespace distconv {

PoolWindow make_pool_window(const PoolDesc& desc, const Shape& src_extent,
                            const Shape& src_strides, const Shape& dst_extent,
                            const Shape& dst_strides) {
  const int k = desc.spatial_dims();
  for (int d = 0; d < k; ++d) {
    require(!desc.circular(d), ErrorKind::kInvalidArgument,
            "a local pooling window has no circular padding (the halos hold "
            "the cells it wraps to)");
  }
  const Shape want = desc.dst_shape(src_extent);
  require(want == dst_extent, ErrorKind::kShapeMismatch, "local pooling of ",
          src_extent, " gives ", want, ", not ", dst_extent);
  require(src_strides.ndims() == src_extent.ndims() &&
              dst_strides.ndims() == dst_extent.ndims(),
          ErrorKind::kShapeMismatch, "local pooling strides ", src_strides,
          " / ", dst_strides, " do not fit extents ", src_extent, " / ",
          dst_extent);
  PoolWindow w{};
  w.kind = desc.kind;
  w.samples = src_extent[0];
  w.channels = src_extent[1];
  w.src_stride[0] = src_strides[0];
  w.src_stride[1] = src_strides[1];
  w.dst_stride[0] = dst_strides[0];
  w.dst_stride[1] = dst_strides[1];
  w.ker_volume = 1;
  for (int e = 0; e < 3; ++e) {
    const int d = e - (3 - k);  // the spatial dimension, < 0: padded
    w.in[e] = d < 0 ? 1 : src_extent[d + 2];
    w.out[e] = d < 0 ? 1 : dst_extent[d + 2];
    w.ker[e] = d < 0 ? 1 : desc.kernel[d];
    w.str[e] = d < 0 ? 1 : desc.stride[d];
    w.pad[e] = d < 0 ? 0 : desc.padding_lower[d];
    w.src_stride[2 + e] = d < 0 ? 0 : src_strides[d + 2];
    w.dst_stride[2 + e] = d < 0 ? 0 : dst_strides[d + 2];
    w.ker_volume *= w.ker[e];
  }
  return w;
}

}  // namespace distconv
