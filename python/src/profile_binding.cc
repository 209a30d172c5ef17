// The profile (layers/profile.h) for Python: distconv.Profiler
// (python/distconv/_profile.py) times the layers' calls and adds them
// here; the summary over the grid's ranks is the C++ examples' table and
// JSON.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/process_grid.h"
#include "layers/profile.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace distconv::python {
namespace {

ProfilePass pass_named(const std::string& name) {
  for (ProfilePass p : {ProfilePass::kForward, ProfilePass::kForwardBackward,
                        ProfilePass::kBackward, ProfilePass::kBackwardData,
                        ProfilePass::kBackwardWeights, ProfilePass::kUpdate,
                        ProfilePass::kOther}) {
    if (name == profile_pass_name(p)) return p;
  }
  throw Error(ErrorKind::kInvalidArgument,
              "unknown profile pass \"" + name +
                  "\" (forward, forward-backward, backward, backward-data, "
                  "backward-weights, "
                  "update or other)");
}

}  // namespace

void bind_profile(py::module_& m) {
  py::class_<Profile>(m, "_Profile")
      .def(py::init<>())
      .def("begin_step", &Profile::begin_step)
      .def("end_step", &Profile::end_step)
      .def("steps", &Profile::steps)
      .def(
          "add",
          [](Profile& p, const std::string& layer, const std::string& pass,
             double seconds, double flops, double bytes, double halo_s,
             double collective_s) {
            LayerStats waits;
            waits.halo_wait_s = halo_s;
            waits.allreduce_wait_s = collective_s;
            p.add(layer, pass_named(pass), seconds, ProfileWork{flops, bytes},
                  waits);
          },
          py::arg("layer"), py::arg("pass_"), py::arg("seconds"),
          py::arg("flops") = 0.0, py::arg("bytes") = 0.0,
          py::arg("halo_s") = 0.0, py::arg("collective_s") = 0.0)
      // Collective over the grid's ranks: (table, json).
      .def("summarize",
           [](const Profile& p, const std::shared_ptr<ProcessGrid>& grid) {
             const ProfileSummary s = p.summarize(grid->comm());
             return std::make_pair(s.table(), s.json());
           });
}

}  // namespace distconv::python
