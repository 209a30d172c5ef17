// Dropout<T>: dropout of elements (torch.nn.Dropout) or of whole channels
// of a sample (Dropout2d / Dropout3d) on tensors split over a ProcessGrid,
// whose mask depends only on a seed and each element's (or channel's)
// global index (kernels/dropout_mask.h): a tensor split any way over any
// ranks gets the mask one process gets with the same seed, and no rank
// communicates. Training scales the kept values by 1 / (1 - p); a seed
// per call (the caller's: the same on every rank, a new one per step) and
// the same seed again in backward.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 1});
//   Dropout<float> drop(grid, {0.5, DropoutKind::kChannels},
//                       Distribution(Shape{2, 16, 64, 64}, grid.shape()));
//   drop.forward(x, y, seed);          // y = x * mask / (1 - p)
//   drop.backward(dy, dx, seed);       // dx = dy * mask / (1 - p)
//
// Global index: row-major over (N, C, spatial...) for elements, n * C + c
// for channels. p in [0, 1]: 0 copies, 1 zeroes. Tensors are read and
// written through their shard interiors (any halos, either storage order,
// of the plan's distribution); dst may be src. Host memory only.
#ifndef DISTCONV_LAYERS_DROPOUT_H_
#define DISTCONV_LAYERS_DROPOUT_H_

#include <cstdint>
#include <string>

#include "distconv/bf16.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "kernels/dropout_mask.h"

namespace distconv {

// DropoutKind (kElements, kChannels): kernels/dropout_mask.h.

struct DropoutDesc {
  double p = 0.5;  // the probability of dropping, in [0, 1]
  DropoutKind kind = DropoutKind::kElements;
};

// Defined for every element type of distconv/element_types.h.
template <typename T>
class Dropout {
 public:
  // Validates p (kInvalidArgument on every rank alike: global values).
  Dropout(const ProcessGrid& grid, const DropoutDesc& desc,
          const Distribution& src);

  const DropoutDesc& desc() const { return desc_; }
  // Channels-last, no halos; any layout of the same distribution does.
  const HaloLayout& layout() const { return layout_; }

  void forward(const DistTensor<T>& src, DistTensor<T>& dst,
               std::uint64_t seed) const;
  void backward(const DistTensor<T>& diff_dst, DistTensor<T>& diff_src,
                std::uint64_t seed) const;

  // "dropout of channels, p = 0.5".
  std::string describe() const;

 private:
  void apply(const DistTensor<T>& from, DistTensor<T>& to,
             std::uint64_t seed) const;
  const ProcessGrid* grid_;
  DropoutDesc desc_;
  HaloLayout layout_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_DROPOUT_H_
