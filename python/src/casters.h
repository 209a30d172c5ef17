// pybind11 conversions between Python tuples of ints and distconv's Shape
// and Box: a Shape is a tuple (2, 16, 64, 64), a Box a pair of them (lower,
// extent). Included by every binding file of the extension module.
#ifndef DISTCONV_PYTHON_SRC_CASTERS_H_
#define DISTCONV_PYTHON_SRC_CASTERS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "distconv/box.h"
#include "distconv/error.h"
#include "distconv/shape.h"
#include "python/src/tensor_ref.h"

namespace pybind11::detail {

template <>
struct type_caster<distconv::Shape> {
  PYBIND11_TYPE_CASTER(distconv::Shape, const_name("Shape"));

  bool load(handle src, bool convert) {
    make_caster<std::vector<distconv::Index>> values;
    if (!values.load(src, convert)) return false;
    const auto& v = cast_op<const std::vector<distconv::Index>&>(values);
    distconv::require(v.size() <= distconv::kMaxDims,
                      distconv::ErrorKind::kInvalidArgument, "a shape of ",
                      v.size(), " dimensions (at most ", distconv::kMaxDims,
                      ")");
    value = distconv::Shape::filled(static_cast<int>(v.size()), 0);
    for (size_t d = 0; d < v.size(); ++d) value[static_cast<int>(d)] = v[d];
    return true;
  }

  static handle cast(const distconv::Shape& s, return_value_policy, handle) {
    tuple t(s.ndims());
    for (int d = 0; d < s.ndims(); ++d) t[d] = int_(s[d]);
    return t.release();
  }
};

template <>
struct type_caster<distconv::Box> {
  PYBIND11_TYPE_CASTER(distconv::Box, const_name("Box"));

  bool load(handle, bool) { return false; }  // only returned to Python

  static handle cast(const distconv::Box& b, return_value_policy policy,
                     handle parent) {
    return make_tuple(
               reinterpret_steal<object>(
                   type_caster<distconv::Shape>::cast(b.lower, policy, parent)),
               reinterpret_steal<object>(type_caster<distconv::Shape>::cast(
                   b.extent, policy, parent)))
        .release();
  }
};

// A tensor as Python passes it: (data_ptr, shape, strides).
template <>
struct type_caster<distconv::python::TensorRef> {
  PYBIND11_TYPE_CASTER(distconv::python::TensorRef, const_name("TensorRef"));

  bool load(handle src, bool convert) {
    if (!isinstance<tuple>(src) || len(src) != 3) return false;
    const tuple t = reinterpret_borrow<tuple>(src);
    make_caster<std::uintptr_t> data;
    make_caster<distconv::Shape> shape, strides;
    if (!data.load(t[0], convert) || !shape.load(t[1], convert) ||
        !strides.load(t[2], convert)) {
      return false;
    }
    value.data = cast_op<std::uintptr_t>(data);
    value.shape = cast_op<distconv::Shape>(shape);
    value.strides = cast_op<distconv::Shape>(strides);
    return value.shape.ndims() == value.strides.ndims();
  }

  static handle cast(const distconv::python::TensorRef&, return_value_policy,
                     handle) {
    return none().release();
  }
};

}  // namespace pybind11::detail

#endif  // DISTCONV_PYTHON_SRC_CASTERS_H_
