// HaloExchange<T, Space>: executes a HaloPlan for tensors in one memory
// space (HostSpace or DeviceSpace), split into start() and wait() so that
// computation on the interior can run while halos travel.
//
//   HaloExchange<float> halo(grid, x.layout());   // collective, plans once
//   halo.start(x);                 // pack, post receives and sends
//   ... compute on cells that need no halo ...
//   halo.wait();                   // halos of x now hold owners' values
//
//   // Backward: send halo contributions home and add them to the owner.
//   halo.exchange(dx, {HaloDirection::kReverse, HaloReduction::kSum});
//
//   // GPU memory, on the caller's stream, over NCCL.
//   HaloSetupOptions setup;
//   setup.transport = HaloTransport::kNccl;
//   HaloExchange<float, DeviceSpace> gpu_halo(grid, y.layout(), setup,
//                                             Exec<DeviceSpace>(stream));
//
// Forward copies owners' shard cells into the halos of the parts that read
// them (halo cells past an open boundary are left as they are). Reverse is
// its adjoint: every halo cell's value is sent to the cell's owner and
// accumulated there (sum, or max for pooling); the halo cells themselves
// are left unchanged. Arrivals are folded in a fixed order, so results are
// deterministic, and every transport gives the same results bit for bit.
//
// How cells travel is the transport (HaloSetupOptions, halo_options.h),
// chosen at construction among those of the memory space. Buffers, MPI
// datatypes, shared windows, streams and communicators are made once, at
// construction; the exchange duplicates the grid's communicator, so several
// exchanges may be in flight at once. All ranks of the grid construct it
// together, call start()/wait() in the same order on tensors of its layout,
// and destroy it together; the grid (and a given stream or communicator)
// must outlive it.
//
// Device memory: boxes are packed on the stream of the exchange's
// Exec<DeviceSpace> (its last argument); messages travel on
// the exchange's own high-priority stream, which waits for the pack through
// an event, so kernels the caller queues after start() overlap the
// transfer; wait() makes the stream wait for the arrivals and queues their
// unpack on it. The host never waits for the stream's own work, except
// that kHostStaged's start() waits for the pack and its copy to the host.
// kCudaIpc's start() waits (on the host) until every receiver has called
// wait() on this exchange's previous exchange in that direction, so ranks
// with several exchanges must interleave their calls alike.
//
// Defined for every element type of distconv/element_types.h in host memory
// (//halo:halo_exchange) and for float, double, bf16, fp16, __half and
// __nv_bfloat16 in device memory
// (//halo:device_transport, built only with --config=cuda).
#ifndef DISTCONV_HALO_HALO_EXCHANGE_H_
#define DISTCONV_HALO_HALO_EXCHANGE_H_

#include <cstddef>
#include <memory>
#include <type_traits>

#include "distconv/dist_tensor.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "halo/halo_options.h"
#include "halo/halo_plan.h"

namespace distconv {
namespace internal {

class Transport;  // halo/transport.h

// Owns a transport; its deleter is defined where Transport is complete
// (halo/halo_exchange.cc), so that code here may destroy one.
struct TransportDeleter {
  void operator()(Transport* transport) const;
};
using TransportPtr = std::unique_ptr<Transport, TransportDeleter>;

// The transports of each memory space, for buffers of T: defined where
// they are (halo/host_transport.cc; halo/device_transport.cc, CUDA builds
// only).
template <typename T>
TransportPtr make_host_transport(const ProcessGrid& grid,
                                 const HaloLayout& layout, const HaloPlan& plan,
                                 const HaloSetupOptions& setup);
template <typename T>
TransportPtr make_device_transport(const ProcessGrid& grid,
                                   const HaloLayout& layout,
                                   const HaloPlan& plan,
                                   const HaloSetupOptions& setup,
                                   const Exec<DeviceSpace>& exec);

// Builds the transport setup.transport names; collective over the grid.
class MakeTransport {
 public:
  virtual TransportPtr operator()(const ProcessGrid& grid,
                                  const HaloLayout& layout,
                                  const HaloPlan& plan,
                                  const HaloSetupOptions& setup) const = 0;

 protected:
  ~MakeTransport() = default;
};

// Space's transports for buffers of T, in `exec`'s context.
template <typename T, typename Space>
class SpaceTransports final : public MakeTransport {
 public:
  explicit SpaceTransports(const Exec<Space>& exec) : exec_(exec) {}
  TransportPtr operator()(const ProcessGrid& grid, const HaloLayout& layout,
                          const HaloPlan& plan,
                          const HaloSetupOptions& setup) const override {
    if constexpr (std::is_same_v<Space, HostSpace>) {
      return make_host_transport<T>(grid, layout, plan, setup);
    } else {
      return make_device_transport<T>(grid, layout, plan, setup, exec_);
    }
  }

 private:
  Exec<Space> exec_;
};

// What every HaloExchange is, whatever its element type and memory space:
// the plan, the checks of each call, the in-flight state and the recovery
// from a failed start() (see halo/transport.h).
class HaloExchangeCore {
 public:
  // Collective: every rank must pass the same layout, transport, element
  // size and memory space (else the same Error(kGridMismatch) everywhere).
  HaloExchangeCore(const ProcessGrid& grid, const HaloLayout& layout,
                   const HaloSetupOptions& setup, const MakeTransport& make,
                   std::size_t element_size, const char* space);

  const HaloPlan& plan() const;
  const HaloLayout& layout() const;
  HaloTransport transport() const;
  bool in_flight() const;
  void start(const HaloLayout& layout, int part, void* data,
             const HaloCallOptions& options);
  double wait();

 private:
  struct State;
  Pimpl<State> state_;
};

}  // namespace internal

template <typename T, typename Space = HostSpace>
class HaloExchange {
 public:
  // Collective over the grid. Throws, on every rank alike: kGridMismatch
  // for a layout over another grid; kInvalidArgument for a transport of
  // another memory space or one the ranks disagree on; kUnsupported for a
  // message over MPI's count limits, for device memory on a rank without a
  // GPU, for kNccl with ranks sharing a GPU, or for kCudaIpc with ranks on
  // several nodes; kDevice where a CUDA or NCCL call fails on some rank.
  HaloExchange(const ProcessGrid& grid, const HaloLayout& layout,
               const HaloSetupOptions& setup = {}, const Exec<Space>& exec = {})
      : core_(grid, layout, setup, internal::SpaceTransports<T, Space>(exec),
              sizeof(T), Space::kName) {}
  // Destroying an exchange in flight completes it (collectively).

  const HaloPlan& plan() const { return core_.plan(); }
  const HaloLayout& layout() const { return core_.layout(); }
  // The transport in use (the space's default resolved).
  HaloTransport transport() const { return core_.transport(); }

  // Throws kState if an exchange is already in flight, kShapeMismatch if
  // the tensor's layout is not the one this exchange was planned for.
  // These checks are local: a rank that alone passes a wrong tensor throws
  // alone. The tensor's buffer must stay put until wait().
  void start(DistTensor<T, Space>& tensor,
             const HaloCallOptions& options = {}) {
    core_.start(tensor.layout(), tensor.part(), tensor.data(), options);
  }
  // Completes the exchange (device memory: queues the unpack on the
  // stream); returns the seconds the host spent here (blocked on messages,
  // and unpacking host memory). Throws kState if nothing is in flight.
  double wait() { return core_.wait(); }
  double exchange(DistTensor<T, Space>& tensor,
                  const HaloCallOptions& options = {}) {
    start(tensor, options);
    return wait();
  }
  bool in_flight() const { return core_.in_flight(); }

 private:
  internal::HaloExchangeCore core_;
};

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_EXCHANGE_H_
