// Profile: where a training step goes, per layer and pass: time, FLOPs and
// GFLOP/s, bytes the kernels move, the time blocked on halo exchanges and
// collectives, and the share of the step; summed over ranks as the
// slowest rank sees it, printed as a table or written as JSON
// (perf/plot_profile.py draws it).
//
// The caller, which owns the calls, times them: a framework or an example
// hands each pass to the profile with the layer it runs, and the profile
// reads the layer's work from its plan (layers/profile_work.h) and its
// blocked time from its stats().
//
//   Profile profile;
//   for (int s = 0; s < steps; ++s) {
//     profile.begin_step();
//     profiled(&profile, "enc1.conv", ProfilePass::kForward, conv,
//              [&] { conv.forward(x, w, b, y); });   // profile_work.h
//     profile.time("sgd", ProfilePass::kUpdate, {}, [&] { sgd.step(); });
//     profile.end_step();
//   }
//   const ProfileSummary sum = profile.summarize(comm);  // collective
//   if (rank == 0) std::cout << sum.table() << sum.json();
//
// A Profile* that is null costs one branch per call: examples hold one
// and run the bare call when profiling is off (`profiled`, below).
//
// Device layers queue work on a stream: give ProfileOptions::synchronize
// (the stream's synchronisation) so that each time stamp waits for what
// was queued; the figures then include that synchronisation.
#ifndef DISTCONV_LAYERS_PROFILE_H_
#define DISTCONV_LAYERS_PROFILE_H_

#include <mpi.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "layers/layer_stats.h"

namespace distconv {

enum class ProfilePass {
  kForward,
  kForwardBackward,  // forward and the input gradient in one call (a loss)
  kBackward,         // input and parameter gradients in one call
  kBackwardData,     // the input gradient (a layer's only backward pass)
  kBackwardWeights,  // the parameters' gradients and their allreduce
  kUpdate,           // the optimizer's step
  kOther,            // moves between grids, data loading
};
// "forward", "forward-backward", "backward", "backward-data",
// "backward-weights", "update", "other".
const char* profile_pass_name(ProfilePass pass);

// What one call computes and moves on this rank.
struct ProfileWork {
  double flops = 0;  // floating-point operations (a multiply-add is 2)
  double bytes = 0;  // bytes its kernels read and write
};

struct ProfileOptions {
  // Called before each time stamp when set (device layers: the stream's
  // synchronisation).
  std::function<void()> synchronize;
};

// One (layer, pass) summed over a rank's calls.
struct ProfileRecord {
  std::string layer;
  ProfilePass pass = ProfilePass::kForward;
  long long calls = 0;
  double seconds = 0;  // wall time, blocked time included
  ProfileWork work;
  double halo_wait_s = 0;        // of which in halo exchanges
  double collective_wait_s = 0;  // in allreduces and channel collectives
};

// One (layer, pass) over all ranks and steps: the slowest rank's times,
// every rank's work summed.
struct ProfileRow {
  std::string layer;
  ProfilePass pass = ProfilePass::kForward;
  long long calls = 0;           // the most calls any rank made
  double seconds = 0;            // the slowest rank's
  double flops = 0;              // summed over ranks
  double bytes = 0;              // summed over ranks
  double halo_wait_s = 0;        // the most any rank waited
  double collective_wait_s = 0;  // the most any rank waited
};

struct ProfileSummary {
  int ranks = 0;
  long long steps = 0;           // begin_step() .. end_step() pairs
  double step_seconds = 0;       // the slowest rank's, summed over the steps
  std::vector<ProfileRow> rows;  // in the order the layers first ran

  // The step's time in no row (the slowest rank's step time less the sum
  // of the rows' slowest times; rows' slowest ranks may differ, so this is
  // a lower bound on what the rows leave out, and may be negative).
  double unaccounted_seconds() const;
  // One line per row: layer, pass, calls per step, ms per step, share of
  // the step, GFLOP/s (all ranks' FLOPs over the slowest rank's time), MB
  // per step (all ranks), halo and collective waits (ms per step); then
  // the unaccounted time and the step.
  std::string table() const;
  // {"ranks":..,"steps":..,"step_ms":..,"rows":[{"layer":..,"pass":..,
  // "calls_per_step":..,"ms_per_step":..,"share":..,"gflops":..,
  // "mb_per_step":..,"halo_wait_ms":..,"collective_wait_ms":..},...],
  // "unaccounted_ms":..}
  std::string json() const;
};

class Profile {
 public:
  explicit Profile(ProfileOptions options = {});

  // A step's bounds: its wall time is the denominator of the shares.
  void begin_step();
  void end_step();

  // Adds one call of (layer, pass).
  void add(const std::string& layer, ProfilePass pass, double seconds,
           const ProfileWork& work, const LayerStats& waits = {});

  // Times fn() as one call of (layer, pass) doing `work`.
  template <typename Fn>
  void time(const std::string& layer, ProfilePass pass, const ProfileWork& work,
            Fn&& fn) {
    const double start = stamp();
    std::forward<Fn>(fn)();
    add(layer, pass, stamp() - start, work);
  }

  // This rank's records, in the order the layers first ran.
  const std::vector<ProfileRecord>& records() const { return records_; }
  long long steps() const { return steps_; }

  // Collective over `comm` (every rank that recorded, each with any
  // records): the same summary on every rank.
  ProfileSummary summarize(MPI_Comm comm) const;

  // MPI_Wtime() after options.synchronize().
  double stamp() const;

 private:
  ProfileOptions options_;
  std::vector<ProfileRecord> records_;
  std::map<std::pair<std::string, ProfilePass>, size_t> index_;
  long long steps_ = 0;
  double step_seconds_ = 0;
  double step_start_ = -1;
};

// fn() bare when `profile` is null, else timed by it.
template <typename Fn>
void profiled(Profile* profile, const std::string& layer, ProfilePass pass,
              const ProfileWork& work, Fn&& fn) {
  if (profile == nullptr) {
    std::forward<Fn>(fn)();
  } else {
    profile->time(layer, pass, work, std::forward<Fn>(fn));
  }
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_PROFILE_H_
