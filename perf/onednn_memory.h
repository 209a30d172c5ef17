// oneDNN memory for the baselines of the layers without weights (batch
// normalisation, the element-wise layers): f32 memory of a descriptor,
// filled with random_vector's values for a seed.
//
//   dnnl::memory x = random_memory(md, engine, /*seed=*/1);
#ifndef DISTCONV_PERF_ONEDNN_MEMORY_H_
#define DISTCONV_PERF_ONEDNN_MEMORY_H_

#include <dnnl.hpp>

#include <algorithm>
#include <vector>

#include "tests/conv_check.h"

namespace distconv {

inline dnnl::memory random_memory(const dnnl::memory::desc& md,
                                  const dnnl::engine& engine, unsigned seed) {
  dnnl::memory m(md, engine);
  const std::vector<float> v = random_vector<float>(
      static_cast<Index>(md.get_size() / sizeof(float)), seed);
  std::copy(v.begin(), v.end(), static_cast<float*>(m.get_data_handle()));
  return m;
}

}  // namespace distconv

#endif  // DISTCONV_PERF_ONEDNN_MEMORY_H_
