// The convolution's settings (ConvolutionOptions: overlap, where the
// input is read, channel parallelism scheme, halo transport, a shared
// input layout); its
// statistics are LayerStats (layer_stats.h). A small header: plans and internal helpers name
// them without including the layer (convolution.h has the schemes'
// semantics).
#ifndef DISTCONV_LAYERS_CONV_OPTIONS_H_
#define DISTCONV_LAYERS_CONV_OPTIONS_H_

#include <optional>
#include <string>

#include "distconv/halo_layout.h"
#include "halo/halo_options.h"
#include "kernels/conv_impl.h"
#include "kernels/gpu_conv_options.h"
#include "layers/layer_stats.h"

namespace distconv {

enum class ConvOverlap {
  kInteriorFirst,  // compute what needs no halo while halos travel
  kNone,           // exchange, then compute (for comparison)
};

// How a convolution splits its work when the grid splits channels inside
// a group (see above). Ignored otherwise.
enum class ChannelParallelism {
  kStationaryOutput,   // allgather the input, reduce-scatter dx
  kStationaryInput,    // reduce-scatter partial outputs, allgather dy
  kStationaryWeights,  // 2D split of the weights: both, over a Pc x Pf grid
};
// "stationary_output", "stationary_input", "stationary_weights".
const char* to_string(ChannelParallelism scheme);
// The scheme of that name; kInvalidArgument naming `what` (an option,
// "--channels") and the names otherwise.
ChannelParallelism channel_parallelism_named(const std::string& name,
                                             const char* what);

// Where the passes read the input and the output gradient.
enum class ConvInput {
  // In tensors of src_layout() and diff_dst_layout(): the shard sits in a
  // buffer with room for the halos, which the exchange fills.
  kHaloBuffer,
  // The caller's shards where they are (tensors of the plain layouts, no
  // halos: a framework's tensors wrapped), with a frame tensor of the
  // haloed layout per pass, of which the layer fills only what the pieces
  // at the edges and the halo exchange read; the interior pieces read the
  // shard itself. Saves copying a shard into a haloed buffer. Planned
  // where channels are not split (ConvPlan::input says what was planned).
  kInPlace,
};

struct ConvolutionOptions {
  ConvOverlap overlap = ConvOverlap::kInteriorFirst;
  ConvInput input = ConvInput::kHaloBuffer;
  ChannelParallelism channels = ChannelParallelism::kStationaryOutput;
  // kStationaryWeights: how many input-channel blocks (Pc) the P channel
  // parts form; it must divide P. 0: the squarest split (Pc <= P / Pc).
  int channel_blocks = 0;
  HaloSetupOptions halo;  // how halos travel
  GpuConvOptions gpu;     // device memory: cuDNN's arithmetic and algorithms
  // Host memory: how the local convolutions choose their implementations
  // (kernels/conv_impl.h): the heuristic (default), or timed when the layer
  // is made, agreed across ranks, optionally through a shared cache.
  CpuConvOptions cpu;
  // The input's layout, when a tensor shared with other layers carries
  // wider halos (widest() of their layouts); it must cover the halos this
  // convolution needs. Unset: exactly those.
  std::optional<HaloLayout> src_layout;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CONV_OPTIONS_H_
