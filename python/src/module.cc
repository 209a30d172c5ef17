// The extension module distconv._distconv: the library's layers as objects
// that work on PyTorch tensors' memory (python/distconv wraps them in
// torch.autograd.Functions and torch.nn.Modules). distconv::Error becomes
// distconv.Error, carrying the kind ("shape mismatch", ...) as `.kind`.
#include <pybind11/pybind11.h>

#include <exception>

#include "distconv/error.h"
#include "python/src/bindings.h"

namespace py = pybind11;

PYBIND11_MODULE(_distconv, m) {
  m.doc() = "distconv's layers on the memory of PyTorch tensors";
  static py::exception<distconv::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const distconv::Error& e) {
      py::object exc =
          py::reinterpret_borrow<py::object>(error.ptr())(e.what());
      exc.attr("kind") = py::str(distconv::to_string(e.kind()));
      PyErr_SetObject(error.ptr(), exc.ptr());
    }
  });
  distconv::python::bind_grid(m);
  distconv::python::bind_conv(m);
  distconv::python::bind_window(m);
  distconv::python::bind_shard_layers(m);
  distconv::python::bind_science(m);
  distconv::python::bind_profile(m);
}
