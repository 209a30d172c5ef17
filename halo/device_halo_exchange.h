// DeviceHaloExchange<T>: the halo exchange (halo_exchange.h) for tensors in
// GPU memory, on the caller's CUDA stream. Same plans, same boxes, same
// forward and reverse semantics (and the same results, bit for bit): only
// how the packed cells travel differs.
//
//   DeviceHaloExchangeConfig config;
//   config.stream = stream;                           // the caller's
//   config.transport = DeviceHaloTransport::kNccl;
//   DeviceHaloExchange<float> halo(grid, x.layout(), config);  // collective
//   halo.start(x);          // pack on `stream`, halos start travelling
//   ... queue interior kernels on `stream`: they run while halos travel ...
//   halo.wait();            // unpacking is queued on `stream`
//
// The buffer's cells are packed by halo/cuda/box_pack.h on `stream`.
// Messages travel on the exchange's own high-priority stream, which waits
// for the pack through an event, so kernels the caller queues on `stream`
// after start() overlap the transfer; wait() makes `stream` wait for the
// arrivals and queues the unpack (copy, or sum/max into owners for the
// reverse exchange) on it. The host never waits for `stream`'s own work,
// except that kHostStaged's start() waits for the pack and its copy to
// the host before handing the cells to MPI (see DeviceHaloTransport).
//
// All ranks of the grid construct it together, call start()/wait() in the
// same order on tensors of its layout, and destroy it together; the grid
// and the stream must outlive it. Defined for float, double, __half and
// __nv_bfloat16. Built only with --config=cuda.
#ifndef DISTCONV_HALO_DEVICE_HALO_EXCHANGE_H_
#define DISTCONV_HALO_DEVICE_HALO_EXCHANGE_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "halo/halo_options.h"
#include "halo/halo_plan.h"

namespace distconv {

enum class DeviceHaloTransport {
  // Packed cells are copied to pinned host buffers and sent with MPI
  // point-to-point, then copied back. Works with any MPI and with several
  // ranks on one GPU. start() blocks the host until the pack is copied out;
  // wait() until MPI has delivered.
  kHostStaged,
  // ncclSend/ncclRecv of the packed device buffers: no host synchronisation
  // at all. Needs one GPU per rank (NCCL refuses two ranks on one GPU;
  // construction says so, on every rank).
  kNccl,
};

struct DeviceHaloExchangeConfig {
  DeviceHaloTransport transport = DeviceHaloTransport::kHostStaged;
  // The stream all GPU work of start() and wait() is ordered on (null: the
  // legacy default stream).
  cudaStream_t stream = nullptr;
  // kNccl: a communicator over the grid's ranks with the grid's rank
  // numbering, owned by the caller (a framework's). Null: the exchange
  // makes one from the grid's communicator, collectively, and frees it.
  ncclComm_t nccl_comm = nullptr;
};

template <typename T>
class DeviceHaloExchange {
 public:
  // Throws, on every rank alike: kGridMismatch for a layout over another
  // grid; kInvalidArgument if ranks disagree on the transport;
  // kUnsupported for kNccl with ranks sharing a GPU; kDevice where a CUDA
  // or NCCL call fails on some rank.
  DeviceHaloExchange(const ProcessGrid& grid, const HaloLayout& layout,
                     const DeviceHaloExchangeConfig& config = {});
  ~DeviceHaloExchange();  // completes an exchange still in flight
  DeviceHaloExchange(DeviceHaloExchange&&) noexcept;
  DeviceHaloExchange& operator=(DeviceHaloExchange&&) noexcept;

  const HaloPlan& plan() const;
  const HaloLayout& layout() const;

  // Throws kState if an exchange is in flight, kShapeMismatch if the
  // tensor's layout is not this exchange's (local checks, as on the host).
  void start(DistTensor<T, DeviceSpace>& tensor,
             const HaloExchangeOptions& options = {});
  // Queues the unpack on the stream; returns the seconds the host spent
  // here (waiting for MPI with kHostStaged). Throws kState if nothing is
  // in flight.
  double wait();
  double exchange(DistTensor<T, DeviceSpace>& tensor,
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

#endif  // DISTCONV_HALO_DEVICE_HALO_EXCHANGE_H_
