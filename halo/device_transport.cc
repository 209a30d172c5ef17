// The device-memory transports behind HaloExchange<T, DeviceSpace>:
// host-staged MPI, NCCL and CUDA IPC (halo_options.h says how each moves
// cells; the IPC links are in ipc_route.h). All pack and unpack the boxes
// with halo/cuda/box_pack.h on the caller's stream and move the packed
// cells on the exchange's own stream; they differ only in how the packed
// cells cross between ranks.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/internal/mpi_util.h"
#include "halo/cuda/box_pack.h"
#include "halo/halo_exchange.h"
#include "halo/ipc_route.h"
#include "halo/nccl_comm.h"
#include "halo/transport.h"

namespace distconv::internal {
namespace {

// Tags of MPI messages (kHostStaged): the plan's tag (< 3^5), offset for
// the reverse direction.
constexpr int kReverseTag = 256;

// Same on every rank: MPI's int counts hold the largest message in bytes.
template <typename T>
void validate_collectively(MPI_Comm comm, const HaloPlan& plan,
                           HaloTransport transport) {
  long long biggest = 0;
  for (const auto* list : {&plan.sends, &plan.recvs}) {
    for (const HaloMessage& m : *list) {
      biggest = std::max<long long>(biggest, sizeof(T) * m.local.volume());
    }
  }
  long long most = biggest;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG, MPI_MAX, comm),
            "MPI_Allreduce");
  require(transport != HaloTransport::kHostStaged || most <= INT_MAX,
          ErrorKind::kUnsupported, "a halo message of ", most,
          " bytes exceeds MPI's count limit of ", INT_MAX);
}

template <typename U>
struct DeviceFree {
  void operator()(U* p) const noexcept { DeviceSpace::deallocate(p); }
};
template <typename U>
struct HostFree {
  void operator()(U* p) const noexcept {
    if (p != nullptr) cudaFreeHost(p);
  }
};
template <typename U>
using DeviceBuffer = std::unique_ptr<U, DeviceFree<U>>;
template <typename U>
using PinnedBuffer = std::unique_ptr<U, HostFree<U>>;

template <typename U>
DeviceBuffer<U> device_buffer(Index n) {
  return DeviceBuffer<U>(static_cast<U*>(DeviceSpace::allocate(sizeof(U) * n)));
}

template <typename U>
PinnedBuffer<U> pinned_buffer(Index n) {
  if (n == 0) return PinnedBuffer<U>(nullptr);
  void* p = nullptr;
  check_cuda(cudaMallocHost(&p, sizeof(U) * n), "cudaMallocHost of ",
             sizeof(U) * n, " bytes");
  return PinnedBuffer<U>(static_cast<U*>(p));
}

template <typename T>
class DeviceTransport final : public Transport {
 public:
  // One direction: the messages this rank packs and sends (`out`) and those
  // it receives and unpacks (`in`), with their boxes and buffers. Forward
  // sends shard boxes into peers' halos; reverse the other way round.
  struct Route {
    const std::vector<HaloMessage>* out;
    const std::vector<HaloMessage>* in;
    const DeviceBoxCopy<T>* out_boxes;
    const DeviceBoxCopy<T>* in_boxes;
    const std::vector<Index>* out_off;
    const std::vector<Index>* in_off;
    T* out_cells;   // device
    T* in_cells;    // device
    T* out_staged;  // pinned host (kHostStaged)
    T* in_staged;   // pinned host (kHostStaged)
    int tag_offset;
    IpcRoute* ipc;  // kCudaIpc
  };

  const HaloLayout& layout;  // the exchange's, which outlive the transport
  const HaloPlan& plan;
  HaloTransport transport;
  cudaStream_t stream;
  MPI_Comm comm = MPI_COMM_NULL;
  ncclComm_t nccl = nullptr;
  bool owns_nccl = false;
  std::vector<Index> send_off, recv_off;
  std::optional<DeviceBoxCopy<T>> shard_boxes, halo_boxes;
  DeviceBuffer<T> shard_cells, halo_cells;
  PinnedBuffer<T> shard_staged, halo_staged;
  std::unique_ptr<IpcRoute> forward_ipc, reverse_ipc;  // kCudaIpc
  cudaStream_t comm_stream = nullptr;                  // where messages travel
  cudaEvent_t packed = nullptr, arrived = nullptr;
  Route forward{}, reverse{};
  std::vector<MPI_Request> requests;
  T* data = nullptr;
  HaloCallOptions options;

  DeviceTransport(const ProcessGrid& grid, const HaloLayout& l,
                  const HaloPlan& p, HaloTransport t,
                  const HaloSetupOptions& config, const Exec<DeviceSpace>& exec)
      : layout(l),
        plan(p),
        transport(t),
        stream(exec.stream()),
        send_off(packed_offsets(plan.sends)),
        recv_off(packed_offsets(plan.recvs)) {
    validate_collectively<T>(grid.comm(), plan, transport);
    check_mpi(MPI_Comm_dup(grid.comm(), &comm), "MPI_Comm_dup");
    try {
      check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
                "MPI_Comm_set_errhandler");
      run_collectively(comm, [&] { allocate(grid, config); });
      if (transport == HaloTransport::kNccl && config.nccl_comm == nullptr) {
        require_distinct_gpus(comm, "the NCCL halo transport");
        nccl = make_nccl_comm(comm);
        owns_nccl = true;
      }
      if (transport == HaloTransport::kCudaIpc) {
        forward_ipc = std::make_unique<IpcRoute>(
            comm, plan.sends, plan.recvs, send_off, recv_off, sizeof(T),
            shard_cells.get(), halo_cells.get(), 0);
        reverse_ipc = std::make_unique<IpcRoute>(
            comm, plan.recvs, plan.sends, recv_off, send_off, sizeof(T),
            halo_cells.get(), shard_cells.get(), kReverseTag);
      }
    } catch (...) {
      release();
      throw;
    }
    forward = {&plan.sends,
               &plan.recvs,
               &*shard_boxes,
               &*halo_boxes,
               &send_off,
               &recv_off,
               shard_cells.get(),
               halo_cells.get(),
               shard_staged.get(),
               halo_staged.get(),
               0,
               forward_ipc.get()};
    reverse = {&plan.recvs,        &plan.sends,       &*halo_boxes,
               &*shard_boxes,      &recv_off,         &send_off,
               halo_cells.get(),   shard_cells.get(), halo_staged.get(),
               shard_staged.get(), kReverseTag,       reverse_ipc.get()};
    requests.reserve(plan.sends.size() + plan.recvs.size());
  }

  // This rank's part of the set-up (run collectively: a failure here is
  // every rank's).
  void allocate(const ProcessGrid& grid, const HaloSetupOptions& config) {
    require(DeviceSpace::device_count() > 0, ErrorKind::kUnsupported,
            "the GPU halo exchange needs a CUDA device, and this rank sees "
            "none");
    const Shape storage = layout.storage_shape(grid.rank());
    shard_boxes.emplace(storage, storage_boxes(layout, plan.sends));
    halo_boxes.emplace(storage, storage_boxes(layout, plan.recvs));
    shard_cells = device_buffer<T>(send_off.back());
    halo_cells = device_buffer<T>(recv_off.back());
    if (transport == HaloTransport::kHostStaged) {
      shard_staged = pinned_buffer<T>(send_off.back());
      halo_staged = pinned_buffer<T>(recv_off.back());
    }
    int least = 0, greatest = 0;
    check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest),
               "cudaDeviceGetStreamPriorityRange");
    check_cuda(cudaStreamCreateWithPriority(&comm_stream, cudaStreamNonBlocking,
                                            greatest),
               "cudaStreamCreateWithPriority");
    check_cuda(cudaEventCreateWithFlags(&packed, cudaEventDisableTiming),
               "cudaEventCreate");
    check_cuda(cudaEventCreateWithFlags(&arrived, cudaEventDisableTiming),
               "cudaEventCreate");
    if (transport == HaloTransport::kNccl && config.nccl_comm) {
      int count = 0, rank = 0;
      check_nccl(ncclCommCount(config.nccl_comm, &count), "ncclCommCount");
      check_nccl(ncclCommUserRank(config.nccl_comm, &rank), "ncclCommUserRank");
      require(count == grid.size() && rank == grid.rank(),
              ErrorKind::kGridMismatch, "the NCCL communicator has rank ", rank,
              " of ", count, " where the grid has rank ", grid.rank(), " of ",
              grid.size());
      nccl = config.nccl_comm;
    }
  }

  ~DeviceTransport() override { release(); }

  void release() noexcept {
    // Kernels and copies may still use the buffers.
    if (comm_stream != nullptr) cudaStreamSynchronize(comm_stream);
    if (shard_boxes) cudaStreamSynchronize(stream);
    forward_ipc.reset();  // collective: meets the peers' streams idle
    reverse_ipc.reset();
    if (packed != nullptr) cudaEventDestroy(packed);
    if (arrived != nullptr) cudaEventDestroy(arrived);
    if (comm_stream != nullptr) cudaStreamDestroy(comm_stream);
    packed = arrived = nullptr;
    comm_stream = nullptr;
    if (owns_nccl && nccl != nullptr) ncclCommDestroy(nccl);
    nccl = nullptr;
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }

  Route& route_in_flight() {
    return options.direction == HaloDirection::kForward ? forward : reverse;
  }

  static std::size_t bytes(const std::vector<Index>& off, size_t i) {
    return sizeof(T) * static_cast<std::size_t>(off[i + 1] - off[i]);
  }

  void post(const Route& r) {
    r.out_boxes->pack(data, r.out_cells, stream);
    check_cuda(cudaEventRecord(packed, stream), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(comm_stream, packed, 0),
               "cudaStreamWaitEvent");
    if (transport == HaloTransport::kCudaIpc) {
      r.ipc->send(comm_stream);
      return;
    }
    const std::vector<HaloMessage>& out = *r.out;
    const std::vector<HaloMessage>& in = *r.in;
    if (transport == HaloTransport::kNccl) {
      // The group is ended whatever happens inside it (an open group would
      // defer every later NCCL call on this thread); errors are reported
      // after.
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      ncclResult_t code = ncclSuccess;
      const char* call = "";
      for (size_t i = 0; i < in.size() && code == ncclSuccess; ++i) {
        code = ncclRecv(r.in_cells + (*r.in_off)[i], bytes(*r.in_off, i),
                        ncclChar, in[i].peer, nccl, comm_stream);
        call = "ncclRecv";
      }
      for (size_t j = 0; j < out.size() && code == ncclSuccess; ++j) {
        code = ncclSend(r.out_cells + (*r.out_off)[j], bytes(*r.out_off, j),
                        ncclChar, out[j].peer, nccl, comm_stream);
        call = "ncclSend";
      }
      const ncclResult_t end = ncclGroupEnd();
      check_nccl(code, call);
      check_nccl(end, "ncclGroupEnd");
      return;
    }
    // kHostStaged. The sync also covers the last wait()'s copy out of the
    // staged receive buffer, which MPI may now overwrite.
    const std::size_t out_bytes = sizeof(T) * r.out_off->back();
    check_cuda(cudaMemcpyAsync(r.out_staged, r.out_cells, out_bytes,
                               cudaMemcpyDeviceToHost, comm_stream),
               "cudaMemcpyAsync of the packed halo cells to the host");
    check_cuda(cudaStreamSynchronize(comm_stream), "cudaStreamSynchronize");
    for (size_t i = 0; i < in.size(); ++i) {
      requests.push_back(MPI_REQUEST_NULL);
      check_mpi(
          MPI_Irecv(r.in_staged + (*r.in_off)[i],
                    static_cast<int>(bytes(*r.in_off, i)), MPI_BYTE, in[i].peer,
                    in[i].tag + r.tag_offset, comm, &requests.back()),
          "MPI_Irecv");
    }
    for (size_t j = 0; j < out.size(); ++j) {
      requests.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Isend(r.out_staged + (*r.out_off)[j],
                          static_cast<int>(bytes(*r.out_off, j)), MPI_BYTE,
                          out[j].peer, out[j].tag + r.tag_offset, comm,
                          &requests.back()),
                "MPI_Isend");
    }
  }

  // Completes the exchange in flight: the arrivals are in r.in_cells for
  // work on the caller's stream (finish() queues their unpack there). The
  // caller's stream also waits for the exchange's own stream, whose sends
  // read r.out_cells, which the next pack overwrites.
  void complete(const Route& r) {
    if (transport == HaloTransport::kCudaIpc) r.ipc->receive(stream);
    if (transport == HaloTransport::kHostStaged) {
      wait_all(requests);
      const std::size_t in_bytes = sizeof(T) * r.in_off->back();
      check_cuda(cudaMemcpyAsync(r.in_cells, r.in_staged, in_bytes,
                                 cudaMemcpyHostToDevice, comm_stream),
                 "cudaMemcpyAsync of the received halo cells to the device");
    }
    check_cuda(cudaEventRecord(arrived, comm_stream), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(stream, arrived, 0), "cudaStreamWaitEvent");
  }

  // Queues the arrivals' unpack on the caller's stream: copied into the
  // halos (forward), or summed or maxed into their owners (reverse).
  void unpack(const Route& r) {
    BoxCombine combine = BoxCombine::kCopy;
    if (options.direction == HaloDirection::kReverse) {
      combine = options.reduction == HaloReduction::kSum ? BoxCombine::kSum
                                                         : BoxCombine::kMax;
    }
    r.in_boxes->unpack(r.in_cells, data, combine, stream);
  }

  HaloTransport kind() const override { return transport; }

  void start(void* buffer, const HaloCallOptions& call) override {
    data = static_cast<T*>(buffer);
    options = call;
    post(route_in_flight());
  }

  void finish() override {
    complete(route_in_flight());
    unpack(route_in_flight());
    release_arrivals(route_in_flight());
  }

  void drain() override {
    complete(route_in_flight());
    release_arrivals(route_in_flight());
  }

  // kCudaIpc: the senders may overwrite r.in_cells once the caller's
  // stream is past the arrivals' use.
  void release_arrivals(const Route& r) {
    if (transport == HaloTransport::kCudaIpc) r.ipc->release(stream);
  }

  void abandon() noexcept override {
    free_requests(requests);
    if (Route& r = route_in_flight(); r.ipc != nullptr) r.ipc->abandon();
  }
};

}  // namespace

template <typename T>
TransportPtr make_device_transport(const ProcessGrid& grid,
                                   const HaloLayout& layout,
                                   const HaloPlan& plan,
                                   const HaloSetupOptions& setup,
                                   const Exec<DeviceSpace>& exec) {
  const HaloTransport transport =
      resolve_transport(setup.transport, HaloTransport::kHostStaged,
                        {HaloTransport::kHostStaged, HaloTransport::kNccl,
                         HaloTransport::kCudaIpc},
                        DeviceSpace::kName);
  return TransportPtr(
      new DeviceTransport<T>(grid, layout, plan, transport, setup, exec));
}

#define DISTCONV_DEVICE_TRANSPORT(T)                          \
  template TransportPtr make_device_transport<T>(             \
      const ProcessGrid&, const HaloLayout&, const HaloPlan&, \
      const HaloSetupOptions&, const Exec<DeviceSpace>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_DEVICE_TRANSPORT)
DISTCONV_DEVICE_TRANSPORT(__half)
DISTCONV_DEVICE_TRANSPORT(__nv_bfloat16)
#undef DISTCONV_DEVICE_TRANSPORT

}  // namespace distconv::internal
