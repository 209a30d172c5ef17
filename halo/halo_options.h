// What one halo exchange call does: forward (owners' cells into the halos
// that read them) or reverse (halo contributions summed, or maxed, into their
// owners). Shared by the host exchange (halo_exchange.h) and the GPU one
// (device_halo_exchange.h).
#ifndef DISTCONV_HALO_HALO_OPTIONS_H_
#define DISTCONV_HALO_HALO_OPTIONS_H_

namespace distconv {

enum class HaloDirection { kForward, kReverse };
enum class HaloReduction { kSum, kMax };

struct HaloExchangeOptions {
  HaloDirection direction = HaloDirection::kForward;
  HaloReduction reduction = HaloReduction::kSum;  // used by kReverse only
};

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_OPTIONS_H_
