// The baseline the distributed transposed convolution is measured against:
// oneDNN's own deconvolution primitives (forward with bias,
// backward-data, backward-weights with bias) on a whole problem in one
// process, every tensor in the layout oneDNN picks (format `any`), threads
// as OpenMP gives them (OMP_NUM_THREADS).
//
//   OnednnDeconvBaseline base(desc, src_shape);
//   base.run(BenchDir::kAll);
#ifndef DISTCONV_PERF_ONEDNN_DECONV_BASELINE_H_
#define DISTCONV_PERF_ONEDNN_DECONV_BASELINE_H_

#include <memory>
#include <string>

#include "distconv/deconv_desc.h"
#include "perf/bench_options.h"

namespace distconv {

class OnednnDeconvBaseline {
 public:
  // desc.bias is taken as ConvBias::kAdd. Tensors hold arbitrary values.
  OnednnDeconvBaseline(const DeconvDesc& desc, const Shape& src_shape);
  ~OnednnDeconvBaseline();
  void run(BenchDir dir);
  // oneDNN's implementation names, "fwd | bwd_d | bwd_w".
  std::string implementation() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_PERF_ONEDNN_DECONV_BASELINE_H_
