// distconv_bench: checks and times the distributed convolution (--conv),
// transposed convolution (--deconv), pooling (--pool), batch normalisation
// (--bnorm) and the layers with no communication (--eltwise) on problems in
// benchdnn's descriptor syntax. See `distconv_bench --help` and
// docs/performance.md.
//
//   mpirun -np 2 distconv_bench --mode=perf --json
//       mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1   (one line)
//   mpirun -np 2 distconv_bench --pool --alg=max mb1ic16ih1024kh3sh2ph1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/json_string.h"
#include "kernels/kernel_cache.h"
#include "kernels/reference/conv.h"
#include "layers/convolution.h"
#include "layers/shared_kernel_cache.h"
#include "perf/bench_options.h"
#include "perf/bench_timing.h"
#include "perf/conv_problem.h"
#include "perf/gpu_bench.h"
#include "perf/layer_bench.h"
#include "perf/onednn_baseline.h"
#include "perf/tensor_dump.h"
#include "tests/conv_check.h"
#include "tests/conv_run.h"

namespace distconv {
namespace {

using Result = BenchResult;

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// The same layer on this process alone (a 1x1x...x1 grid over
// MPI_COMM_SELF): every pass, results into the out arrays.
template <typename T, typename P = Compute<T>>
void serial_passes(const ConvDesc& desc, const Shape& src_shape,
                   const std::vector<T>& x, const std::vector<P>& w,
                   const std::vector<P>& b, const std::vector<T>& dy,
                   std::vector<T>* y, std::vector<T>* dx, std::vector<P>* dw,
                   std::vector<P>* db) {
  const Shape ones = Shape::filled(src_shape.ndims(), 1);
  ProcessGrid self(MPI_COMM_SELF, ones);
  ConvRun<T> run(self, desc, src_shape);
  run.scatter_inputs(x.data(), dy.data());
  run.all_passes(w.data(), b.data(), dw->data(), db->data());
  run.gather_outputs(y->data(), dx->data());
}

template <typename T>
Result run_distconv(const BenchOptions& o, const ConvProblem& problem,
                    bool root) {
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  ConvDesc desc = problem.desc;
  desc.bias = ConvBias::kAdd;
  const Shape src_shape = problem.src_shape;
  const Shape dst_shape = desc.dst_shape(src_shape);
  ProcessGrid grid(MPI_COMM_WORLD, grid_for(o, src_shape, ranks, problem));
  ConvolutionOptions copt;
  copt.overlap = o.overlap;
  copt.channels = o.channels;
  copt.channel_blocks = o.channel_blocks;
  copt.halo.transport = o.transport;
  copt.input = o.input;
  copt.cpu = o.cpu;
  using P = Compute<T>;  // weights, bias, gradients (fp32 for bf16)
  ConvRun<T> layer(grid, desc, src_shape, copt);
  Convolution<T>& conv = layer.conv;
  print_plan(o, grid.rank(), conv.describe());
  DistTensor<T>& x = layer.x;
  DistTensor<T>& y = layer.y;
  DistTensor<T>& dy = layer.dy;
  DistTensor<T>& dx = layer.dx;
  const auto w = random_vector<P>(desc.weights_shape().volume(), 2);
  const auto b = random_vector<P>(desc.out_channels, 3);
  // This rank's blocks of the parameters and their gradients (the whole
  // of them unless the grid splits channels).
  const std::vector<P> wb = layer.weights_block(w.data());
  const std::vector<P> bb = layer.bias_block(b.data());
  std::vector<P> dwb(wb.size()), dbb(bb.size());
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd_d = runs_pass(o.dir, BenchDir::kBackwardData);
  const bool bwd_w = runs_pass(o.dir, BenchDir::kBackwardWeights);
  // One run of the selected passes; returns seconds blocked on messages.
  auto run = [&] {
    conv.reset_stats();
    if (layer.in_place()) {
      if (fwd) conv.forward(x, *layer.x_frame, wb.data(), bb.data(), y);
      if (bwd_w) {
        conv.backward_weights(x, *layer.x_frame, dy, dwb.data(), dbb.data());
      }
      if (bwd_d) conv.backward_data(dy, *layer.dy_frame, wb.data(), dx);
    } else {
      if (fwd) conv.forward(x, wb.data(), bb.data(), y);
      if (bwd_w) conv.backward_weights(x, dy, dwb.data(), dbb.data());
      if (bwd_d) conv.backward_data(dy, wb.data(), dx);
    }
    if (bwd_w) conv.wait_gradients();
    const ConvStats& s = conv.stats();
    return s.halo_wait_s + s.allreduce_wait_s + s.channel_s;
  };
  // A forward pass: what backward-weights reads of x (its halos, or in
  // place its frame) filled.
  auto prefill = [&] {
    if (layer.in_place()) {
      conv.forward(x, *layer.x_frame, wb.data(), bb.data(), y);
    } else {
      conv.forward(x, wb.data(), bb.data(), y);
    }
  };
  Result r;
  if (o.mode == BenchMode::kPerf) {
    if (!fwd) prefill();  // fills x's halos
    time_runs(o, run, &r);
    r.gflops = conv_flops(problem, o.dir) / (r.median_ms * 1e-3) / 1e9;
    return r;
  }
  std::vector<T> xg, dyg;
  if (root) {
    xg = random_vector<T>(src_shape.volume(), 1);
    dyg = random_vector<T>(dst_shape.volume(), 4);
  }
  layer.scatter_inputs(xg.data(), dyg.data());
  if (!fwd) prefill();
  time_once(run, &r);
  std::vector<P> dw(w.size()), db(b.size());
  if (bwd_w) {
    layer.assemble(dwb.data(), desc.weights_shape(), conv.weights_block(),
                   dw.data());
    layer.assemble(dbb.data(), Shape{desc.out_channels}, conv.bias_block(),
                   db.data());
  }
  r.gflops = conv_flops(problem, o.dir) / (r.median_ms * 1e-3) / 1e9;
  std::vector<T> yg(root ? dst_shape.volume() : 0);
  std::vector<T> dxg(root ? src_shape.volume() : 0);
  layer.gather_outputs(yg.data(), dxg.data());
  dump_conv_tensors(grid.comm(), o, x, dy, y, dx, desc.weights_shape(),
                    desc.out_channels, w.data(), b.data(), dw.data(),
                    db.data());
  if (!root) return r;
  // bf16: the references run in fp32 on the same (bf16) inputs.
  std::vector<P> y_ref(yg.size()), dx_ref(dxg.size()), dw_ref(w.size()),
      db_ref(b.size());
  if (o.check == BenchCheck::kSerial) {
    std::vector<T> ys(yg.size()), dxs(dxg.size());
    serial_passes(desc, src_shape, xg, w, b, dyg, &ys, &dxs, &dw_ref, &db_ref);
    y_ref = widened(ys);
    dx_ref = widened(dxs);
  } else {
    const std::vector<P> xp = widened(xg), dyp = widened(dyg);
    if (fwd) {
      reference::conv_fwd(desc, src_shape, xp.data(), w.data(), b.data(),
                          dst_shape, y_ref.data());
    }
    if (bwd_d) {
      reference::conv_bwd_data(desc, dst_shape, dyp.data(), w.data(), src_shape,
                               dx_ref.data());
    }
    if (bwd_w) {
      reference::conv_bwd_weights(desc, src_shape, xp.data(), dst_shape,
                                  dyp.data(), dw_ref.data(), db_ref.data());
    }
  }
  double out_err = 0, grad_err = 0;
  if (fwd) out_err = std::max(out_err, max_relative_error(widened(yg), y_ref));
  if (bwd_d)
    out_err = std::max(out_err, max_relative_error(widened(dxg), dx_ref));
  if (bwd_w) {
    grad_err = std::max(grad_err, max_relative_error(dw, dw_ref));
    grad_err = std::max(grad_err, max_relative_error(db, db_ref));
  }
  // y and dx are rounded to T; the weight gradients are P's.
  const double grad_tol = conv_tolerance<P>(problem);
  const double out_tol = rounded_tolerance<T>(grad_tol);
  r.max_rel_err = std::max(out_err, grad_err);
  r.status = out_err <= out_tol && grad_err <= grad_tol ? "PASS" : "FAIL";
  return r;
}

Result run_onednn(const BenchOptions& o, const ConvProblem& problem) {
  OnednnBaseline base(problem.desc, problem.src_shape, o.dt);
  Result r;
  time_runs(
      o,
      [&] {
        base.run(o.dir);
        return 0.0;
      },
      &r);
  r.gflops = conv_flops(problem, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

// fp16: the layers take fp16 tensors, but this driver does not time them;
// the error says whether oneDNN could run the problem in f16 here (the
// baseline can, where it has f16 kernels for this CPU).
Result run_f16(const ConvProblem& problem) {
  std::string onednn =
      onednn_lacks(problem.desc, problem.src_shape, BenchDataType::kF16);
  if (onednn.empty()) onednn = "oneDNN has an f16 convolution for this CPU";
  throw Error(ErrorKind::kUnsupported,
              "--dt=f16: this driver does not time distconv's fp16 layers "
              "(--dt=bf16 times the 16-bit path they share); " +
                  onednn);
}

// `channels`: the channel scheme where the grid splits a convolution's
// channels, else empty.
void report(const BenchOptions& o, const ConvProblem& p, const Result& r,
            int ranks, const std::string& grid, const std::string& channels) {
  const char* threads = std::getenv("OMP_NUM_THREADS");
  const std::string impl = to_string(o.impl);
  const std::string device = to_string(o.device);
  const std::string on = o.device == BenchDevice::kGpu ? " on gpu" : "";
  const std::string dt = to_string(o.dt);
  const std::string overlap =
      o.overlap == ConvOverlap::kInteriorFirst ? "on" : "off";
  std::string label = channels.empty() ? grid : grid + " " + channels;
  if (o.padding_mode == PaddingMode::kCircular) label += " circular padding";
  if (o.json) {
    std::ostringstream j;
    j << "{\"driver\": \"" << to_string(o.driver)
      << "\", \"problem\": " << internal::json_quoted(to_string(p))
      << ", \"impl\": \"" << impl << "\", \"device\": \"" << device
      << "\", \"grid\": \"" << grid << "\", \"ranks\": " << ranks
      << ", \"threads\": \"" << (threads ? threads : "") << "\", \"dir\": \""
      << to_string(o.dir) << "\", \"dt\": \"" << dt << "\", \"mode\": \""
      << to_string(o.mode) << "\", \"overlap\": \"" << overlap
      << "\", \"padding_mode\": \"" << to_string(o.padding_mode) << "\"";
    if (!channels.empty()) j << ", \"channels\": \"" << channels << "\"";
    if (o.device == BenchDevice::kGpu) {
      j << ", \"math\": \""
        << (o.gpu_math == GpuMath::kTf32 ? "tf32" : "strict") << "\"";
    }
    j << ", \"status\": \"" << r.status << "\", \"median_ms\": " << r.median_ms
      << ", \"min_ms\": " << r.min_ms << ", \"gflops\": " << r.gflops
      << ", \"comm_wait_ms\": " << r.comm_wait_ms;
    if (o.mode == BenchMode::kCorrectness) {
      j << ", \"max_rel_err\": " << r.max_rel_err;
    }
    if (!r.error.empty())
      j << ", \"error\": " << internal::json_quoted(r.error);
    j << "}";
    std::printf("%s\n", j.str().c_str());
  } else if (!r.error.empty()) {
    std::printf("%s: %s %s\n", to_string(p).c_str(), r.status.c_str(),
                r.error.c_str());
  } else if (o.mode == BenchMode::kCorrectness) {
    std::printf("%s%s grid %s %s %s: max rel err %.3g %s (%.1f ms)\n",
                to_string(p).c_str(), on.c_str(), label.c_str(),
                to_string(o.dir).c_str(), dt.c_str(), r.max_rel_err,
                r.status.c_str(), r.median_ms);
  } else {
    std::printf(
        "%s %s%s grid %s %s %s overlap %s: median %.2f ms, min %.2f ms, "
        "%.1f GFLOP/s, comm wait %.2f ms\n",
        to_string(p).c_str(), impl.c_str(), on.c_str(), label.c_str(),
        to_string(o.dir).c_str(), dt.c_str(), overlap.c_str(), r.median_ms,
        r.min_ms, r.gflops, r.comm_wait_ms);
  }
  std::fflush(stdout);
}

// --kernel-cache: the cache every layer of the run shares, from FILE
// where FILE can be trusted; says on rank 0 what it took.
std::shared_ptr<KernelCache> load_kernel_cache(const std::string& path,
                                               bool root) {
  auto cache = std::make_shared<KernelCache>();
  const std::string why = cache->load(path);
  if (root) {
    if (why.empty()) {
      std::printf("kernel cache %s: %zu choices taken\n", path.c_str(),
                  cache->size());
    } else {
      std::printf("kernel cache not used (%s): timing afresh\n", why.c_str());
    }
  }
  return cache;
}

// Every rank's choices into FILE (written by rank 0).
void save_kernel_cache(const std::string& path, KernelCache& cache, bool root) {
  const std::size_t hits = cache.hits(), searched = cache.misses();
  share_kernel_cache(MPI_COMM_WORLD, cache);
  if (!root) return;
  cache.save(path);
  std::printf(
      "kernel cache %s: %zu choices written (rank 0: %zu kernels "
      "from the cache, %zu timed)\n",
      path.c_str(), cache.size(), hits, searched);
}

int run_all(BenchOptions o) {
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const bool root = rank_of(MPI_COMM_WORLD) == 0;
  int failed = 0;
  if (!o.kernel_cache.empty()) {
    o.cpu.cache = load_kernel_cache(o.kernel_cache, root);
  }
  for (const ConvProblem& p : o.problems) {
    Result r;
    std::string grid = "?", channels;
    try {
      const Shape g = grid_for(o, p.src_shape, ranks, p);
      grid = g.to_string();
      if (o.driver == ProblemKind::kConvolution &&
          o.impl == BenchImpl::kDistconv && g[1] > 1) {
        channels = to_string(o.channels);
      }
      // Every driver's baseline runs the whole problem in this process.
      require(o.impl == BenchImpl::kDistconv ||
                  (ranks == 1 && o.mode == BenchMode::kPerf),
              ErrorKind::kInvalidArgument, "--impl=", to_string(o.impl),
              " runs in one process (-np 1) in perf mode");
      if (o.device == BenchDevice::kGpu) {
        r = run_gpu_bench(o, p);
      } else if (o.driver == ProblemKind::kPooling) {
        r = run_pool_bench(o, p);
      } else if (o.driver == ProblemKind::kBatchNorm) {
        r = run_bnorm_bench(o, p);
      } else if (o.driver == ProblemKind::kGroupNorm) {
        r = run_gnorm_bench(o, p);
      } else if (o.driver == ProblemKind::kInterpolate) {
        r = run_interp_bench(o, p);
      } else if (o.driver == ProblemKind::kElementwise) {
        r = run_eltwise_bench(o, p);
      } else if (o.driver == ProblemKind::kDeconvolution) {
        r = run_deconv_bench(o, p);
      } else if (o.impl == BenchImpl::kOnednn) {
        r = run_onednn(o, p);
      } else if (o.dt == BenchDataType::kF16) {
        r = run_f16(p);
      } else {
        r = for_dt(
            o, [&](auto t) { return run_distconv<decltype(t)>(o, p, root); });
      }
    } catch (const Error& e) {  // thrown alike on every rank
      r.status = "ERROR";
      r.error = e.what();
    } catch (const std::bad_alloc& e) {
      // Where an allocation is not agreed: on rank 0 alone, after the
      // problem's last collective (the reference's arrays).
      r.status = "ERROR";
      r.error = std::string("cannot allocate memory (") + e.what() + ")";
    }
    if (r.status != "OK" && r.status != "PASS") failed = 1;
    if (root) report(o, p, r, ranks, grid, channels);
    // Rank 0 reports; every other rank says it too, for its own log.
    if (!root && r.status == "ERROR") {
      std::fprintf(stderr, "distconv_bench (rank %d of %d): %s: ERROR %s\n",
                   rank_of(MPI_COMM_WORLD), ranks, to_string(p).c_str(),
                   r.error.c_str());
    }
  }
  if (o.cpu.cache) save_kernel_cache(o.kernel_cache, *o.cpu.cache, root);
  return failed;
}

}  // namespace
}  // namespace distconv

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool root = distconv::rank_of(MPI_COMM_WORLD) == 0;
  int rc = 0;
  try {
    const distconv::BenchOptions o = distconv::parse_bench_options(
        std::vector<std::string>(argv + 1, argv + argc));
    if (o.help) {
      if (root) std::printf("%s", distconv::bench_usage());
    } else {
      rc = distconv::run_all(o);
    }
  } catch (const distconv::Error& e) {
    if (root) std::fprintf(stderr, "distconv_bench: %s\n", e.what());
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
