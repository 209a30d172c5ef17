#include "halo/halo_exchange.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"
#include "halo/transport.h"

namespace distconv::internal {
namespace {

// The checks of the exchange's calls, the same in every memory space.
// Local (no communication): start() and wait() misuse is the caller's on
// each rank.
void check_halo_grid(const HaloLayout& layout, const ProcessGrid& grid) {
  require(layout.distribution().grid_shape() == grid.shape(),
          ErrorKind::kGridMismatch, "halo layout over grid ",
          layout.distribution().grid_shape(), " used with a process grid ",
          grid.shape());
}

void check_halo_start(bool in_flight, const HaloLayout& tensor_layout,
                      int tensor_part, const HaloLayout& layout, int part) {
  require(!in_flight, ErrorKind::kState,
          "start() called while an exchange is in flight; call wait() first");
  require(tensor_layout == layout && tensor_part == part,
          ErrorKind::kShapeMismatch, "tensor of global shape ",
          tensor_layout.distribution().global_shape(),
          " does not have the layout this halo exchange was planned for");
}

void check_halo_wait(bool in_flight) {
  require(in_flight, ErrorKind::kState,
          "wait() called with no exchange in flight");
}

}  // namespace

HaloTransport resolve_transport(HaloTransport requested,
                                HaloTransport space_default,
                                std::initializer_list<HaloTransport> allowed,
                                const char* space) {
  const HaloTransport chosen =
      requested == HaloTransport::kDefault ? space_default : requested;
  std::string names;
  for (HaloTransport a : allowed) {
    names += std::string(names.empty() ? "" : ", ") + to_string(a);
  }
  require(std::find(allowed.begin(), allowed.end(), chosen) != allowed.end(),
          ErrorKind::kInvalidArgument, "the halo transport ", to_string(chosen),
          " does not move ", space, " memory (use one of ", names, ")");
  return chosen;
}

void free_requests(std::vector<MPI_Request>& requests) noexcept {
  for (MPI_Request& r : requests) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  requests.clear();
}

struct HaloExchangeCore::State {
  HaloLayout layout;
  HaloPlan plan;
  TransportPtr transport;
  bool in_flight = false;

  State(const ProcessGrid& grid, const HaloLayout& l,
        const HaloSetupOptions& setup, const MakeTransport& make)
      : layout(l), plan(make_halo_plan(l, grid.rank())) {
    transport = make(grid, layout, plan, setup);
  }

  ~State() {
    if (!in_flight) return;
    try {
      transport->drain();
    } catch (const Error&) {
      // Completing failed; nothing more can be done here.
    }
  }
};

void TransportDeleter::operator()(Transport* transport) const {
  delete transport;
}

HaloExchangeCore::HaloExchangeCore(const ProcessGrid& grid,
                                   const HaloLayout& layout,
                                   const HaloSetupOptions& setup,
                                   const MakeTransport& make,
                                   std::size_t element_size,
                                   const char* space) {
  run_collectively(grid.comm(), [&] { check_halo_grid(layout, grid); });
  Fingerprint f("halo exchange");
  f.add("element size", std::to_string(element_size) + " bytes")
      .add("memory space", space)
      .add("halo transport", to_string(setup.transport))
      .add("layout", layout);
  agree(grid.comm(), f);
  state_ = Pimpl<State>::make("halo exchange", grid, layout, setup, make);
}

const HaloPlan& HaloExchangeCore::plan() const { return state_->plan; }
const HaloLayout& HaloExchangeCore::layout() const { return state_->layout; }
HaloTransport HaloExchangeCore::transport() const {
  return state_->transport->kind();
}
bool HaloExchangeCore::in_flight() const { return state_->in_flight; }

void HaloExchangeCore::start(const HaloLayout& layout, int part, void* data,
                             const HaloCallOptions& options) {
  State& s = *state_;
  check_halo_start(s.in_flight, layout, part, s.layout, s.plan.part);
  try {
    s.transport->start(data, options);
  } catch (...) {
    s.transport->abandon();
    throw;
  }
  s.in_flight = true;
}

double HaloExchangeCore::wait() {
  State& s = *state_;
  check_halo_wait(s.in_flight);
  const auto t0 = std::chrono::steady_clock::now();
  s.in_flight = false;
  s.transport->finish();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

}  // namespace distconv::internal
