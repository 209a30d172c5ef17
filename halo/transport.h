// Internal: the interface behind HaloExchange<T, Space> (halo_exchange.h).
// A transport moves the cells of one HaloPlan between the ranks of a grid,
// for tensors in one memory space; the exchange checks every call, keeps
// the in-flight state and runs one failure recovery for all transports:
//
//   start() throws     -> abandon(): posted messages are released, nothing
//                         is in flight, the error propagates;
//   destroyed in flight -> drain(): the messages complete, arrivals are
//                         dropped (every rank destroys its exchange).
//
// The host transports (shared-memory window, packed point-to-point, MPI
// datatypes) live in host_transport.cc, the device ones (host-staged,
// NCCL, CUDA IPC; CUDA only) in device_transport.cc and ipc_route.cc.
// Each memory space has a factory (make_host_transport<T>,
// make_device_transport<T>, declared in halo_exchange.h), chosen by the
// exchange at compile time (transport_factory<T, Space>). A transport reads the
// exchange's layout and plan, which outlive it. The interface takes the buffer
// untyped, so one HaloExchangeCore serves every element type; each transport is
// a template over its element type.
#ifndef DISTCONV_HALO_TRANSPORT_H_
#define DISTCONV_HALO_TRANSPORT_H_

#include <mpi.h>

#include <initializer_list>
#include <vector>

#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "halo/halo_options.h"
#include "halo/halo_plan.h"

namespace distconv::internal {

class Transport {
 public:
  virtual ~Transport() = default;
  // The transport actually used (never kDefault).
  virtual HaloTransport kind() const = 0;
  // Posts the exchange of `data` (this rank's buffer of the plan's layout):
  // packs the outgoing boxes of options.direction and sends them, posts
  // the receives. `data` stays put until finish() or drain().
  virtual void start(void* data, const HaloCallOptions& options) = 0;
  // Completes the exchange started last and folds every arrival into the
  // buffer: copied into halos (forward), summed or maxed into their owners
  // (reverse).
  virtual void finish() = 0;
  // Completes the exchange started last, dropping its arrivals.
  virtual void drain() = 0;
  // After start() threw: releases whatever it posted, without waiting.
  virtual void abandon() noexcept = 0;
};

// The transport `requested` means in a space whose default is
// `space_default`: kInvalidArgument if it is none of `allowed` (`space`
// names the memory in the message). Local: the exchange has already
// agreed on `requested` across ranks (its fingerprint), so every rank
// reaches the same verdict.
HaloTransport resolve_transport(HaloTransport requested,
                                HaloTransport space_default,
                                std::initializer_list<HaloTransport> allowed,
                                const char* space);

// For abandon(): frees every posted request without waiting for it, and
// empties the list.
void free_requests(std::vector<MPI_Request>& requests) noexcept;

}  // namespace distconv::internal

#endif  // DISTCONV_HALO_TRANSPORT_H_
