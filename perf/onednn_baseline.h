// The baseline distconv is measured against: bare oneDNN primitives
// (forward with bias, backward-data, backward-weights with bias) on a whole
// problem in one process, every tensor in the layout oneDNN picks
// (format `any`), threads as OpenMP gives them (OMP_NUM_THREADS).
//
//   OnednnBaseline base(problem.desc, problem.src_shape);
//   base.run(BenchDir::kAll);                  // one timed-able run
//
// In bf16 (or f16): activations and weights of that type, the bias and
// the weight and bias gradients fp32, as the bf16 layer keeps them.
#ifndef DISTCONV_PERF_ONEDNN_BASELINE_H_
#define DISTCONV_PERF_ONEDNN_BASELINE_H_

#include <memory>
#include <string>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "perf/bench_options.h"

namespace distconv {

class OnednnBaseline {
 public:
  // desc.bias is taken as ConvBias::kAdd. Tensors hold arbitrary values.
  // Throws kUnsupported, naming the type, where oneDNN has no convolution
  // of `dt` (f32, bf16 or f16) for this CPU.
  OnednnBaseline(const ConvDesc& desc, const Shape& src_shape,
                 BenchDataType dt = BenchDataType::kF32);
  ~OnednnBaseline();
  void run(BenchDir dir);
  // oneDNN's implementation names, "fwd | bwd_d | bwd_w".
  std::string implementation() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Why oneDNN cannot run the problem in `dt` on this CPU ("oneDNN 3.2 has
// no f16 convolution for this CPU (...)"); empty when it can.
std::string onednn_lacks(const ConvDesc& desc, const Shape& src_shape,
                         BenchDataType dt);

}  // namespace distconv

#endif  // DISTCONV_PERF_ONEDNN_BASELINE_H_
