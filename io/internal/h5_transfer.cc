#include "io/internal/h5_transfer.h"

#include "distconv/error.h"

namespace distconv::io::internal {

Shape dims_of(hid_t space) {
  const int n = H5Sget_simple_extent_ndims(space);
  require(n >= 0 && n <= kMaxDims, ErrorKind::kIo, "a dataset of ", n,
          " dimensions (at most ", kMaxDims, ")");
  hsize_t dims[kMaxDims];
  H5Sget_simple_extent_dims(space, dims, nullptr);
  Shape s = Shape::filled(n, 0);
  for (int d = 0; d < n; ++d) s[d] = static_cast<Index>(dims[d]);
  return s;
}

Hid simple_space(const Shape& shape) {
  hsize_t dims[kMaxDims];
  for (int d = 0; d < shape.ndims(); ++d)
    dims[d] = static_cast<hsize_t>(shape[d]);
  return checked(shape.ndims() == 0
                     ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(shape.ndims(), dims, nullptr),
                 H5Sclose, "cannot make a dataspace");
}

void select(hid_t space, const Box& box) {
  if (box.empty()) {
    check_h5(H5Sselect_none(space), "cannot select");
    return;
  }
  if (box.ndims() == 0) return;
  hsize_t start[kMaxDims], count[kMaxDims];
  for (int d = 0; d < box.ndims(); ++d) {
    start[d] = static_cast<hsize_t>(box.lower[d]);
    count[d] = static_cast<hsize_t>(box.extent[d]);
  }
  check_h5(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count,
                               nullptr),
           "cannot select a hyperslab");
}

Hid transfer(H5FD_mpio_xfer_t mode) {
  Hid dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose,
                     "cannot make a transfer property list");
  check_h5(H5Pset_dxpl_mpio(dxpl.get(), mode),
           "cannot choose collective or independent I/O");
  return dxpl;
}

}  // namespace distconv::io::internal
