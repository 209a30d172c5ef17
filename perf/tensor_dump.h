// The benchmark driver's --dump-dir: every tensor of a correctness run
// written collectively from the ranks' shards (nothing is gathered), and
// the arrays every rank holds whole (weights, per-channel values) from
// rank 0's copy.
//
//   TensorDump dump(grid.comm(), o);    // nothing happens without --dump-dir
//   dump.add("x", x);                   // DistTensor: DIR/x.npy, or dataset
//   dump.add("w", w_shape, w.data());   //   "x" of DIR/tensors.h5
//   (--dump-format=h5) dump.close();
//
// Collective over `comm`; an I/O failure throws the same Error(kIo) on
// every rank. Tensors of bf16 are refused (kInvalidArgument), as
// parse_bench_options refuses --dump-dir with --dt=bf16; without
// --dump-dir nothing is written in any type.
#ifndef DISTCONV_PERF_TENSOR_DUMP_H_
#define DISTCONV_PERF_TENSOR_DUMP_H_

#include <mpi.h>

#include <optional>
#include <string>

#include "distconv/dist_tensor.h"
#include "io/h5_file.h"
#include "perf/bench_options.h"

namespace distconv {

class TensorDump {
 public:
  TensorDump(MPI_Comm comm, const BenchOptions& options);
  bool enabled() const { return !dir_.empty(); }

  template <typename T>
  void add(const std::string& name, const DistTensor<T>& tensor);
  // `data`: shape.volume() values, read on rank 0 only.
  template <typename T>
  void add(const std::string& name, const Shape& shape, const T* data);
  // Finishes the HDF5 file (errors are thrown here, on every rank).
  void close();

 private:
  MPI_Comm comm_;
  std::string dir_;
  std::optional<io::H5File> h5_;
};

// A convolution's or transposed convolution's tensors, dumped as x w b dy
// y dx dw db (the parameters and their gradients whole on every rank,
// read on rank 0).
// Parameters in Compute<T> (fp32 for bf16).
template <typename T>
void dump_conv_tensors(MPI_Comm comm, const BenchOptions& options,
                       const DistTensor<T>& x, const DistTensor<T>& dy,
                       const DistTensor<T>& y, const DistTensor<T>& dx,
                       const Shape& weights, Index out_channels,
                       const Compute<T>* w, const Compute<T>* b,
                       const Compute<T>* dw, const Compute<T>* db) {
  TensorDump dump(comm, options);
  const Shape bias{out_channels};
  dump.add("x", x);
  dump.add("w", weights, w);
  dump.add("b", bias, b);
  dump.add("dy", dy);
  dump.add("y", y);
  dump.add("dx", dx);
  dump.add("dw", weights, dw);
  dump.add("db", bias, db);
  dump.close();
}

}  // namespace distconv

#endif  // DISTCONV_PERF_TENSOR_DUMP_H_
