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
// Datatypes, buffers and shared windows are made once, at construction. The
// exchange duplicates the grid's communicator, so several exchanges may be
// in flight at once. All ranks of the grid construct it together, call
// start()/wait() in the same order on tensors of the same layout, and
// destroy it together; the grid must outlive it.
#ifndef DISTCONV_HALO_HALO_EXCHANGE_H_
#define DISTCONV_HALO_HALO_EXCHANGE_H_

#include <mpi.h>

#include <memory>

#include "distconv/dist_tensor.h"
#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "halo/halo_options.h"
#include "halo/halo_plan.h"

namespace distconv {

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
  // tensor's layout is not the one this exchange was planned for. These
  // checks are local: a rank that alone passes a wrong tensor throws alone.
  // The tensor's buffer must stay put until wait().
  void start(DistTensor<T>& tensor, const HaloExchangeOptions& options = {});
  // Completes the exchange; returns the seconds it took (blocked on
  // messages, and unpacking). Throws kState if nothing is in flight.
  double wait();
  double exchange(DistTensor<T>& tensor,
                  const HaloExchangeOptions& options = {}) {
    start(tensor, options);
    return wait();
  }
  bool in_flight() const;

 private:
  struct Impl;
  Impl& impl() const;  // throws kState once moved from
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_EXCHANGE_H_
