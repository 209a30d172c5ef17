#include "perf/tensor_dump.h"

#include <type_traits>

#include "distconv/bf16.h"
#include "distconv/error.h"
#include "distconv/fp16.h"
#include "io/npy_file.h"

namespace distconv {

TensorDump::TensorDump(MPI_Comm comm, const BenchOptions& options)
    : comm_(comm), dir_(options.dump_dir) {
  if (enabled() && options.dump_format == DumpFormat::kHdf5) {
    h5_.emplace(comm, dir_ + "/tensors.h5", io::H5Mode::kCreate);
  }
}

template <typename T>
void TensorDump::add(const std::string& name, const DistTensor<T>& tensor) {
  if (!enabled()) return;
  if constexpr (kNarrow<T>) {
    // (parse_bench_options refuses --dump-dir with --dt=bf16 and f16)
    throw Error(
        ErrorKind::kInvalidArgument,
        "--dump-dir writes f32 and f64 runs: not " + name + " in 16 bits");
  } else if (h5_) {
    h5_->write(name, tensor);
  } else {
    io::write_npy(dir_ + "/" + name + ".npy", tensor);
  }
}

template <typename T>
void TensorDump::add(const std::string& name, const Shape& shape,
                     const T* data) {
  if (!enabled()) return;
  if (h5_) {
    h5_->write(name, shape, data);
  } else {
    io::write_npy(comm_, dir_ + "/" + name + ".npy", shape, data);
  }
}

void TensorDump::close() {
  if (h5_) h5_->close();
  h5_.reset();
}

template void TensorDump::add<float>(const std::string&,
                                     const DistTensor<float>&);
template void TensorDump::add<double>(const std::string&,
                                      const DistTensor<double>&);
template void TensorDump::add<bf16>(const std::string&,
                                    const DistTensor<bf16>&);
template void TensorDump::add<fp16>(const std::string&,
                                    const DistTensor<fp16>&);
template void TensorDump::add<float>(const std::string&, const Shape&,
                                     const float*);
template void TensorDump::add<double>(const std::string&, const Shape&,
                                      const double*);

}  // namespace distconv
