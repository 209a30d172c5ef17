#include "layers/profile.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "distconv/error.h"
#include "distconv/internal/json_string.h"
#include "distconv/internal/mpi_util.h"

namespace distconv {
namespace {

// One record per line, tab-separated, numbers exact (%.17g).
std::string serialize(const std::vector<ProfileRecord>& records,
                      long long steps, double step_seconds) {
  std::ostringstream out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%lld\t%.17g\n", steps, step_seconds);
  out << buf;
  for (const ProfileRecord& r : records) {
    std::snprintf(buf, sizeof buf,
                  "\t%d\t%lld\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n",
                  static_cast<int>(r.pass), r.calls, r.seconds, r.work.flops,
                  r.work.bytes, r.halo_wait_s, r.collective_wait_s);
    out << r.layer << buf;
  }
  return out.str();
}

// Merges one rank's serialized records into `sum`.
void merge(const std::string& text, ProfileSummary& sum,
           std::map<std::pair<std::string, int>, size_t>& index) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  long long steps = 0;
  double step_seconds = 0;
  std::sscanf(line.c_str(), "%lld\t%lg", &steps, &step_seconds);
  sum.steps = std::max(sum.steps, steps);
  sum.step_seconds = std::max(sum.step_seconds, step_seconds);
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    ProfileRow r;
    r.layer = line.substr(0, tab);
    int pass = 0;
    std::sscanf(line.c_str() + tab, "\t%d\t%lld\t%lg\t%lg\t%lg\t%lg\t%lg",
                &pass, &r.calls, &r.seconds, &r.flops, &r.bytes, &r.halo_wait_s,
                &r.collective_wait_s);
    r.pass = static_cast<ProfilePass>(pass);
    auto [it, fresh] = index.try_emplace({r.layer, pass}, sum.rows.size());
    if (fresh) {
      sum.rows.push_back(r);
      continue;
    }
    ProfileRow& m = sum.rows[it->second];
    m.calls = std::max(m.calls, r.calls);
    m.seconds = std::max(m.seconds, r.seconds);
    m.flops += r.flops;
    m.bytes += r.bytes;
    m.halo_wait_s = std::max(m.halo_wait_s, r.halo_wait_s);
    m.collective_wait_s = std::max(m.collective_wait_s, r.collective_wait_s);
  }
}

// Per step: seconds to milliseconds.
double per_step_ms(double seconds, long long steps) {
  return steps > 0 ? 1e3 * seconds / static_cast<double>(steps) : 0;
}

// Per step: bytes to megabytes.
double per_step_mb(double bytes, long long steps) {
  return steps > 0 ? bytes / 1e6 / static_cast<double>(steps) : 0;
}

}  // namespace

const char* profile_pass_name(ProfilePass pass) {
  switch (pass) {
    case ProfilePass::kForward:
      return "forward";
    case ProfilePass::kForwardBackward:
      return "forward-backward";
    case ProfilePass::kBackward:
      return "backward";
    case ProfilePass::kBackwardData:
      return "backward-data";
    case ProfilePass::kBackwardWeights:
      return "backward-weights";
    case ProfilePass::kUpdate:
      return "update";
    case ProfilePass::kOther:
      return "other";
  }
  return "?";
}

Profile::Profile(ProfileOptions options) : options_(std::move(options)) {}

double Profile::stamp() const {
  if (options_.synchronize) options_.synchronize();
  return MPI_Wtime();
}

void Profile::begin_step() {
  require(step_start_ < 0, ErrorKind::kState,
          "Profile::begin_step inside a step (end_step first)");
  step_start_ = stamp();
}

void Profile::end_step() {
  require(step_start_ >= 0, ErrorKind::kState,
          "Profile::end_step without begin_step");
  step_seconds_ += stamp() - step_start_;
  step_start_ = -1;
  ++steps_;
}

void Profile::add(const std::string& layer, ProfilePass pass, double seconds,
                  const ProfileWork& work, const LayerStats& waits) {
  require(!layer.empty() && layer.find_first_of("\t\n") == std::string::npos,
          ErrorKind::kInvalidArgument, "a profile's layer name must be ",
          "non-empty, without tabs or line breaks: \"", layer, "\"");
  auto [it, fresh] = index_.try_emplace({layer, pass}, records_.size());
  if (fresh) {
    ProfileRecord r;
    r.layer = layer;
    r.pass = pass;
    records_.push_back(r);
  }
  ProfileRecord& r = records_[it->second];
  ++r.calls;
  r.seconds += seconds;
  r.work.flops += work.flops;
  r.work.bytes += work.bytes;
  r.halo_wait_s += waits.halo_wait_s;
  r.collective_wait_s += waits.allreduce_wait_s + waits.channel_s;
}

ProfileSummary Profile::summarize(MPI_Comm comm) const {
  const std::string mine = serialize(records_, steps_, step_seconds_);
  const std::vector<std::string> each = internal::allgather_bytes(comm, mine);
  ProfileSummary sum;
  sum.ranks = static_cast<int>(each.size());
  std::map<std::pair<std::string, int>, size_t> index;
  for (const std::string& rank : each) merge(rank, sum, index);
  return sum;
}

double ProfileSummary::unaccounted_seconds() const {
  double rows_s = 0;
  for (const ProfileRow& r : rows) rows_s += r.seconds;
  return step_seconds - rows_s;
}

namespace {

// A row's figures per step, as the table and the JSON print them.
struct PerStep {
  double calls, ms, share, gflops, mb, halo_ms, collective_ms;
};

PerStep per_step(const ProfileRow& r, long long steps, double step_ms) {
  const double n = steps > 0 ? static_cast<double>(steps) : 1;
  const double ms = per_step_ms(r.seconds, steps);
  return {r.calls / n,
          ms,
          step_ms > 0 ? ms / step_ms : 0,
          r.seconds > 0 ? r.flops / r.seconds / 1e9 : 0,
          per_step_mb(r.bytes, steps),
          per_step_ms(r.halo_wait_s, steps),
          per_step_ms(r.collective_wait_s, steps)};
}

}  // namespace

std::string ProfileSummary::table() const {
  std::ostringstream out;
  char buf[512];
  const double step_ms = per_step_ms(step_seconds, steps);
  size_t width = 12;
  for (const ProfileRow& r : rows) width = std::max(width, r.layer.size());
  const int w = static_cast<int>(width);
  std::snprintf(buf, sizeof buf, "%-*s %-16s %6s %9s %6s %9s %9s %8s %8s\n", w,
                "layer", "pass", "calls", "ms/step", "share", "GFLOP/s",
                "MB/step", "halo ms", "coll ms");
  out << buf;
  for (const ProfileRow& r : rows) {
    const PerStep f = per_step(r, steps, step_ms);
    out << r.layer << std::string(width - r.layer.size(), ' ');
    std::snprintf(buf, sizeof buf,
                  " %-16s %6.3g %9.3f %5.1f%% %9.2f %9.2f %8.3f %8.3f\n",
                  profile_pass_name(r.pass), f.calls, f.ms, 100 * f.share,
                  f.gflops, f.mb, f.halo_ms, f.collective_ms);
    out << buf;
  }
  const double rest_ms = per_step_ms(unaccounted_seconds(), steps);
  std::snprintf(buf, sizeof buf, "%-*s %-16s %6s %9.3f %5.1f%%\n", w,
                "(in no row)", "", "", rest_ms,
                step_ms > 0 ? 100 * rest_ms / step_ms : 0);
  out << buf;
  std::snprintf(buf, sizeof buf,
                "%-*s %-16s %6s %9.3f (the slowest of %d ranks, %lld steps)\n",
                w, "step", "", "", step_ms, ranks, steps);
  out << buf;
  return out.str();
}

std::string ProfileSummary::json() const {
  std::ostringstream out;
  char buf[512];
  const double step_ms = per_step_ms(step_seconds, steps);
  std::snprintf(buf, sizeof buf,
                "{\"ranks\": %d, \"steps\": %lld, \"step_ms\": %.6g, "
                "\"unaccounted_ms\": %.6g, \"rows\": [",
                ranks, steps, step_ms,
                per_step_ms(unaccounted_seconds(), steps));
  out << buf;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ProfileRow& r = rows[i];
    const PerStep f = per_step(r, steps, step_ms);
    out << (i == 0 ? "" : ",")
        << "\n  {\"layer\": " << internal::json_quoted(r.layer);
    std::snprintf(buf, sizeof buf,
                  ", \"pass\": \"%s\", \"calls_per_step\": %.6g, "
                  "\"ms_per_step\": %.6g, \"share\": %.6g, \"gflops\": %.6g, "
                  "\"mb_per_step\": %.6g, \"halo_wait_ms\": %.6g, "
                  "\"collective_wait_ms\": %.6g}",
                  profile_pass_name(r.pass), f.calls, f.ms, f.share, f.gflops,
                  f.mb, f.halo_ms, f.collective_ms);
    out << buf;
  }
  out << "\n]}\n";
  return out.str();
}

}  // namespace distconv
