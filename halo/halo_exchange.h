// HaloExchange<T>: executes a HaloPlan over MPI non-blocking point-to-point
// messages, split into start() and wait() so computation on the interior can
// run while halos travel.
//
//   HaloExchange<float> halo(grid, x.layout());   // collective, plans once
//   halo.start(x);                 // pack, post receives and sends
//   ... compute on cells that need no halo ...
//   halo.wait();                   // halos of x now hold owners' values
//
//   // Backward: send halo contributions home and add them to the owner.
//   halo.exchange(dx, {HaloDirection::kReverse, HaloReduction::kSum});
//
// Forward copies owners' shard cells into the halos of the parts that read
// them (halo cells past an open boundary are left as they are). Reverse is
// its adjoint: every halo cell's value is sent to the cell's owner and
// accumulated there (sum, or max for pooling); the halo cells themselves are
// left unchanged. Messages are unpacked in a fixed order, so results are
// deterministic.
//
// Datatypes and buffers are made once, at construction. The
// exchange duplicates the grid's communicator, so several exchanges may be
// in flight at once. All ranks of the grid must construct it together and
// call start()/wait() on tensors of the same layout; the grid must outlive it.
#ifndef DISTCONV_HALO_HALO_EXCHANGE_H_
#define DISTCONV_HALO_HALO_EXCHANGE_H_

#include <memory>

#include "distconv/dist_tensor.h"
#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "halo/halo_plan.h"

namespace distconv {

enum class HaloDirection { kForward, kReverse };
enum class HaloReduction { kSum, kMax };

// How message data leaves and enters the tensor's buffer (both are tested
// on every grid; docs/performance.md compares them).
enum class HaloTransport {
  // distconv packs each box into its own contiguous buffer and unpacks it on
  // arrival; the default (faster with Open MPI's shared-memory transport).
  kPackedBuffers,
  // MPI subarray datatypes read and write the tensor directly, leaving the
  // packing to the MPI library.
  kMpiDatatypes,
};

struct HaloExchangeConfig {
  HaloTransport transport = HaloTransport::kPackedBuffers;
};

struct HaloExchangeOptions {
  HaloDirection direction = HaloDirection::kForward;
  HaloReduction reduction = HaloReduction::kSum;  // used by kReverse only
};

// Defined for float and double.
template <typename T>
class HaloExchange {
 public:
  HaloExchange(const ProcessGrid& grid, const HaloLayout& layout,
               const HaloExchangeConfig& config = {});
  ~HaloExchange();  // completes an exchange still in flight
  HaloExchange(HaloExchange&&) noexcept;
  HaloExchange& operator=(HaloExchange&&) noexcept;

  const HaloPlan& plan() const;
  const HaloLayout& layout() const;

  // Throws kState if an exchange is already in flight, kShapeMismatch if the
  // tensor's layout is not the one this exchange was planned for.
  void start(DistTensor<T>& tensor, const HaloExchangeOptions& options = {});
  // Throws kState if nothing is in flight.
  void wait();
  void exchange(DistTensor<T>& tensor,
                const HaloExchangeOptions& options = {}) {
    start(tensor, options);
    wait();
  }
  bool in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_EXCHANGE_H_
