// LayerStats: the seconds a layer spent blocked on communication since its
// last reset_stats(), shared by the layers that exchange halos (a layer
// leaves at 0 what it does not do).
//
//   conv.reset_stats();
//   ... passes ...
//   const LayerStats& s = conv.stats();   // s.halo_wait_s, ...
#ifndef DISTCONV_LAYERS_LAYER_STATS_H_
#define DISTCONV_LAYERS_LAYER_STATS_H_

namespace distconv {

struct LayerStats {
  double halo_wait_s = 0;       // in halo exchanges, forward and reverse
  double allreduce_wait_s = 0;  // in wait_gradients
  double channel_s = 0;  // in channel collectives and piece swaps
                         // (packing included)
};

using ConvStats = LayerStats;
using DeconvStats = LayerStats;
using PoolStats = LayerStats;

}  // namespace distconv

#endif  // DISTCONV_LAYERS_LAYER_STATS_H_
