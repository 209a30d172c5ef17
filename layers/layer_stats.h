// LayerStats: the seconds a layer spent blocked on communication since its
// last reset_stats(), shared by the layers that exchange halos or reduce
// over ranks (a layer leaves at 0 what it does not do).
//
//   conv.reset_stats();
//   ... passes ...
//   const LayerStats& s = conv.stats();   // s.halo_wait_s, ...
#ifndef DISTCONV_LAYERS_LAYER_STATS_H_
#define DISTCONV_LAYERS_LAYER_STATS_H_

namespace distconv {

struct LayerStats {
  double halo_wait_s = 0;       // in halo exchanges, forward and reverse
  // In wait_gradients; batch norm and the loss: in the allreduces of
  // their statistics and sums (blocking calls, so a rank that arrives
  // early waits there for the others).
  double allreduce_wait_s = 0;
  double channel_s = 0;  // in channel collectives and piece swaps
                         // (packing included)
};

using ConvStats = LayerStats;
using DeconvStats = LayerStats;
using PoolStats = LayerStats;

}  // namespace distconv

#endif  // DISTCONV_LAYERS_LAYER_STATS_H_
