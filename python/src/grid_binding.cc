// The process grid, the per-call agreement on shards, and the functions
// that move whole tensors: shard/gather (every rank), scatter and
// gather_to_root (one root), the gradient sum over a grid dimension and
// redistribution between grids.
#include <mpi.h>
#include <mpi4py/mpi4py.h>
#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/process_grid.h"
#include "distconv/scatter_gather.h"
#include "distconv/shard_distribution.h"
#include "layers/copy_shard.h"
#include "layers/redistribute.h"
#include "python/src/bindings.h"
#include "python/src/block_cache.h"
#include "python/src/casters.h"
#include "python/src/element_types.h"
#include "python/src/tensor_ref.h"

namespace py = pybind11;

namespace distconv::python {
namespace {

using internal::check_mpi;

MPI_Comm comm_of(const py::object& comm) {
  PyObject* o = comm.ptr();
  require(PyObject_TypeCheck(o, &PyMPIComm_Type), ErrorKind::kInvalidArgument,
          "ProcessGrid takes an mpi4py communicator, not ",
          std::string(py::str(py::type::handle_of(comm))));
  return *PyMPIComm_Get(o);
}

// The Python ProcessGrid: the library's grid and the memory of the
// tensors the package hands out on it (layer outputs, input gradients).
class Grid : public ProcessGrid {
 public:
  Grid(MPI_Comm comm, const Shape& shape) : ProcessGrid(comm, shape) {}
  BlockCache& cache() { return cache_; }

 private:
  BlockCache cache_;
};

// An uninitialised array of `shape` in the library's storage order
// (channels-last) on a block of the grid's cache; the block goes back to
// the cache when the array (and the torch.Tensor made from it) dies.
// dtype: a NumPy dtype name ("float32", "int64", "bool", ...; a bfloat16
// tensor is made as "int16" and viewed, python/distconv/_tensors.py).
py::array empty_shard(Grid& grid, const Shape& shape, const std::string& dtype) {
  const py::dtype type(dtype);
  const auto item = static_cast<std::size_t>(type.itemsize());
  const Shape strides = dense_strides(shape, StorageOrder::kChannelsLast);
  std::vector<py::ssize_t> extent, step;
  for (int d = 0; d < shape.ndims(); ++d) {
    require(shape[d] >= 0, ErrorKind::kInvalidArgument, "a shape ", shape,
            " with a negative extent");
    extent.push_back(shape[d]);
    step.push_back(strides[d] * static_cast<py::ssize_t>(item));
  }
  auto lease =
      grid.cache().acquire(static_cast<std::size_t>(shape.volume()) * item);
  void* data = lease->data();
  py::capsule owner(lease.release(),
                    [](void* p) { delete static_cast<BlockCache::Lease*>(p); });
  return py::array(type, extent, step, data, owner);
}

// The per-call agreement: a problem any rank found with its arguments
// (an empty string when none) becomes the same Error on every rank; then
// the dtypes must agree and the shards tile a tensor over the grid.
void check(const ProcessGrid& grid, const std::string& problem) {
  internal::run_collectively(grid.comm(), [&] {
    require(problem.empty(), ErrorKind::kInvalidArgument, problem);
  });
}

// One allgather carries every rank's problem flag, dtype and shard; only
// where some rank has a problem does its message travel (check()).
Distribution agree(const ProcessGrid& grid, const Shape& local, int dtype,
                   const std::string& problem) {
  const GatheredShards g =
      gather_shards(grid, local, {problem.empty() ? 0 : 1, dtype});
  bool any = false;
  for (int r = 0; r < grid.size(); ++r) any = any || g.tag(r, 0) != 0;
  if (any) check(grid, problem);  // throws the problem on every rank
  for (int r = 1; r < grid.size(); ++r) {
    require(g.tag(r, 1) == g.tag(0, 1), ErrorKind::kInvalidArgument,
            "ranks pass tensors of different dtypes");
  }
  return distribution_of(grid, g);
}

template <typename T>
void gather_all(const ProcessGrid& grid, const Distribution& dist,
                const TensorRef& local, const TensorRef& global) {
  Slot<T> slot;
  DistTensor<T>& t = bind_input(grid, plain_layout(dist), local, slot);
  gather(t, global.ptr<T>(), 0);
  const Index n = dist.global_shape().volume();
  check_mpi(MPI_Bcast(global.ptr<T>(), static_cast<int>(n),
                      internal::mpi_datatype<T>(), 0, grid.comm()),
            "MPI_Bcast");
}

template <typename T>
void gather_to(const ProcessGrid& grid, const Distribution& dist,
               const TensorRef& local, const TensorRef& global, int root) {
  Slot<T> slot;
  gather(bind_input(grid, plain_layout(dist), local, slot), global.ptr<T>(),
         root);
}

template <typename T>
void scatter_from(const ProcessGrid& grid, const Distribution& dist,
                  const TensorRef& global, const TensorRef& local, int root) {
  Output<T> t(grid, plain_layout(dist), local);
  scatter(global.ptr<const T>(), t.tensor(), root);
  t.finish();
}

// Sums a dense array over the ranks that differ only in grid dimension
// `dim` (a weight gradient's blocks into the whole).
template <typename T>
void sum_along(const ProcessGrid& grid, int dim, const TensorRef& t) {
  require(dim >= 0 && dim < grid.ndims(), ErrorKind::kInvalidArgument,
          "grid dimension ", dim, " of a ", grid.ndims(), "-dimensional grid");
  if (grid.shape()[dim] == 1) return;
  check_mpi(MPI_Allreduce(
                MPI_IN_PLACE, t.ptr<T>(), static_cast<int>(t.shape.volume()),
                internal::mpi_datatype<T>(), MPI_SUM, grid.along(dim)),
            "MPI_Allreduce");
}

// A dense array, the same on every rank: root's (a parameter's initial
// values).
template <typename T>
void broadcast(const ProcessGrid& grid, const TensorRef& t, int root) {
  check_mpi(MPI_Bcast(t.ptr<T>(), static_cast<int>(t.shape.volume()),
                      internal::mpi_datatype<T>(), root, grid.comm()),
            "MPI_Bcast");
}

// A global tensor's shape and dtype code on every rank, from `root`.
struct ShapeAndType {
  Shape shape;
  int dtype = 0;
};
ShapeAndType broadcast_shape_and_type(const ProcessGrid& grid,
                                      const Shape& shape, int dtype,
                                      int root) {
  long long v[kMaxDims + 2] = {shape.ndims(), dtype};
  for (int d = 0; d < shape.ndims(); ++d) v[d + 2] = shape[d];
  check_mpi(MPI_Bcast(v, kMaxDims + 2, MPI_LONG_LONG, root, grid.comm()),
            "MPI_Bcast");
  ShapeAndType out{Shape::filled(static_cast<int>(v[0]), 0),
                   static_cast<int>(v[1])};
  for (int d = 0; d < out.shape.ndims(); ++d) out.shape[d] = v[d + 2];
  return out;
}

// Moves shards of `src` over one grid to shards of `dst` over another (or
// the same) grid of the same ranks; backward moves gradients back.
template <typename T>
class Redistributor {
 public:
  Redistributor(std::shared_ptr<ProcessGrid> from, const Distribution& src,
                std::shared_ptr<ProcessGrid> to, const Distribution& dst)
      : from_(std::move(from)),
        to_(std::move(to)),
        layer_(*from_, plain_layout(src), *to_, plain_layout(dst)) {}
  Shape dst_shape() const {
    return layer_.dst_layout().local_shape(to_->rank());
  }
  void forward(const TensorRef& x, const TensorRef& y) {
    Slot<T> in;
    Output<T> out(*to_, layer_.dst_layout(), y);
    layer_.forward(bind_input(*from_, layer_.src_layout(), x, in),
                   out.tensor());
    out.finish();
  }
  void backward(const TensorRef& dy, const TensorRef& dx) {
    Slot<T> in;
    Output<T> out(*from_, layer_.src_layout(), dx);
    layer_.backward(bind_input(*to_, layer_.dst_layout(), dy, in),
                    out.tensor());
    out.finish();
  }

 private:
  std::shared_ptr<ProcessGrid> from_, to_;
  Redistribution<T> layer_;
};

// What moves cells as they are, for every data type.
template <typename T>
void bind_data(py::module_& m, const std::string& suffix) {
  m.def(("gather_all" + suffix).c_str(), &gather_all<T>);
  m.def(("gather_to" + suffix).c_str(), &gather_to<T>);
  m.def(("scatter_from" + suffix).c_str(), &scatter_from<T>);
  py::class_<Redistributor<T>>(m, ("Redistribution" + suffix).c_str())
      .def(py::init<std::shared_ptr<ProcessGrid>, const Distribution&,
                    std::shared_ptr<ProcessGrid>, const Distribution&>())
      .def("dst_shape", &Redistributor<T>::dst_shape)
      .def("forward", &Redistributor<T>::forward)
      .def("backward", &Redistributor<T>::backward);
}

// What works on whole parameters (float and double).
template <typename T>
void bind_param(py::module_& m, const std::string& suffix) {
  m.def(("sum_along" + suffix).c_str(), &sum_along<T>);
  m.def(("broadcast" + suffix).c_str(), &broadcast<T>);
}

// A distribution from its part sizes, one list per dimension.
Distribution distribution_from_sizes(
    const std::vector<std::vector<Index>>& sizes) {
  std::vector<BlockPartition> parts;
  for (const std::vector<Index>& s : sizes) {
    for (Index v : s) {
      require(v >= 0, ErrorKind::kInvalidArgument, "a part of size ", v);
    }
    parts.push_back(BlockPartition::from_sizes(s));
  }
  return Distribution(std::move(parts));
}

std::vector<Index> part_sizes(const Distribution& d, int dim) {
  require(dim >= 0 && dim < d.ndims(), ErrorKind::kInvalidArgument,
          "dimension ", dim, " of a ", d.ndims(), "-dimensional distribution");
  const BlockPartition& p = d.partition(dim);
  std::vector<Index> out;
  for (int i = 0; i < p.parts(); ++i) out.push_back(p.size(i));
  return out;
}

}  // namespace

void bind_grid(py::module_& m) {
  require(import_mpi4py() == 0, ErrorKind::kInvalidArgument,
          "cannot import mpi4py's C API");
  py::class_<ProcessGrid, std::shared_ptr<ProcessGrid>>(m, "_Grid")
      .def_property_readonly("rank", &ProcessGrid::rank)
      .def_property_readonly("size", &ProcessGrid::size)
      .def_property_readonly("ndims", &ProcessGrid::ndims)
      .def_property_readonly("shape", &ProcessGrid::shape)
      .def_property_readonly("coord", &ProcessGrid::coord)
      .def("__repr__", [](const ProcessGrid& g) {
        return "ProcessGrid(" + g.shape().to_string() + ", rank " +
               std::to_string(g.rank()) + ")";
      });
  // dynamic_attr: the package keeps the layers it plans for a grid on the
  // grid object (python/distconv/_moves.py), so they die with it.
  py::class_<Grid, ProcessGrid, std::shared_ptr<Grid>>(m, "ProcessGrid",
                                                       py::dynamic_attr())
      .def(py::init([](const py::object& comm, const Shape& shape) {
             return std::make_shared<Grid>(comm_of(comm), shape);
           }),
           py::arg("comm"), py::arg("shape"))
      .def("_empty", &empty_shard)
      .def("empty_cache", [](Grid& g) { g.cache().release(); })
      .def_property_readonly("cached_bytes",
                             [](Grid& g) { return g.cache().cached_bytes(); })
      .def_property(
          "cache_limit",
          [](Grid& g) -> py::object {
            std::size_t limit = g.cache().limit();
            if (limit == BlockCache::kNoLimit) return py::none();
            return py::int_(limit);
          },
          [](Grid& g, const py::object& limit) {
            g.cache().set_limit(limit.is_none() ? BlockCache::kNoLimit
                                                : limit.cast<std::size_t>());
          });
  py::class_<Distribution>(m, "Distribution")
      .def(py::init<const Shape&, const Shape&>())
      .def_static("from_sizes", &distribution_from_sizes)
      .def_property_readonly("global_shape", &Distribution::global_shape)
      .def_property_readonly("grid_shape", &Distribution::grid_shape)
      .def("sizes", &part_sizes)
      .def("shard", py::overload_cast<int>(&Distribution::shard, py::const_))
      .def("describe", &Distribution::describe)
      .def("__eq__",
           [](const Distribution& a, const Distribution& b) { return a == b; });
  m.def("agree", &agree);
  m.def("check", &check);
  m.def("broadcast_shape_and_type",
        [](const ProcessGrid& grid, const Shape& shape, int dtype, int root) {
          const ShapeAndType b =
              broadcast_shape_and_type(grid, shape, dtype, root);
          return py::make_tuple(b.shape, b.dtype);
        });
  for_each_data_type([&](auto tag, const std::string& suffix) {
    bind_data<typename decltype(tag)::type>(m, suffix);
  });
  bind_param<float>(m, "_f32");
  bind_param<double>(m, "_f64");
}

}  // namespace distconv::python
