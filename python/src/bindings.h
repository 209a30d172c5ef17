// The parts of the extension module (python/src/module.cc), one per file.
#ifndef DISTCONV_PYTHON_SRC_BINDINGS_H_
#define DISTCONV_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace distconv::python {

void bind_grid(pybind11::module_& m);          // grid_binding.cc
void bind_conv(pybind11::module_& m);          // conv_binding.cc
void bind_window(pybind11::module_& m);        // window_binding.cc
void bind_shard_layers(pybind11::module_& m);  // shard_binding.cc
void bind_science(pybind11::module_& m);       // science_binding.cc
void bind_profile(pybind11::module_& m);       // profile_binding.cc

}  // namespace distconv::python

#endif  // DISTCONV_PYTHON_SRC_BINDINGS_H_
