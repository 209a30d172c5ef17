#!/usr/bin/python3
"""The PyTorch front end against the C++ layer and against PyTorch, side
by side in one run: one layer's training step (a convolution's forward
with bias, backward-data, backward-weights with bias; pooling's forward
and backward; a transposed convolution's three passes; bilinear
interpolation's forward and backward), fp32, H split over the ranks.

    perf/torch_bench.py [--rounds=R] [--ranks=1,2] [PROBLEM ...]

For each problem and rank count P, each round times, one after another:
  - distconv_bench --mode=perf on P ranks (the C++ layer; its median),
    twice: planned as the front end plans it (--input=in_place: the
    haloed side read in place, halos in frames) and with buffers with
    halos (--input=buffers, the C++ default);
  - the distconv.nn module in a PyTorch loop on P ranks (y = layer(x);
    y.backward(dy); median of the slowest rank over 10 steps after 2);
  - the torch.nn module on one process with P threads (the same loop).
The C++ layer in place runs right next to the Python layer, before it in
even rounds and after it in odd ones.
It prints every round's figures, then the medians over rounds and the
ratios python/C++ (the front end's cost, against the C++ layer in place),
buffers/in place (what reading in place saves the C++ layer),
torch/C++, torch/python, and the fastest step of the C++ layer and of
the Python one over all rounds with their ratio (on a shared, noisy
machine the fastest steps are the ones least disturbed by other work),
the median over rounds of each round's python/C++ (the two runs
next to each other, so a slow drift of the machine cancels), and, in
process, the Python step against the time inside the library's calls in
the same steps (distconv.Profiler over 10 more steps, each rank's own
figures, the rank where the ratio is largest: what the front end adds,
which no drift between runs moves).
Needs `bazel build //perf:distconv_bench //python:distconv` first; runs
from the repository root (one oneDNN thread per rank).
PROBLEM is [KIND:]SIZES, KIND one of
  conv:N,C,H,W,F,K     Conv2d(C, F, K, padding=(K-1)//2) (the default)
  pool:N,C,H,W,K,S     MaxPool2d(K, S, padding=(K-1)//2)
  deconv:N,C,H,W,F,K,S ConvTranspose2d(C, F, K, S, padding=(K-1)//2, with
                       the output_padding that makes the output H*S x W*S)
  interp:N,C,H,W       Upsample(scale_factor=2, mode='bilinear')
(default conv:1,16,1024,1024,16,3 and conv:8,64,128,128,64,3).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEMS = ["1,16,1024,1024,16,3", "8,64,128,128,64,3"]
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
          "none", "--mca", "plm", "isolated", "--mca",
          "btl_vader_single_copy_mechanism", "none", "-x",
          "OMP_NUM_THREADS=1"]


FIELDS = {"conv": "N,C,H,W,F,K", "pool": "N,C,H,W,K,S",
          "deconv": "N,C,H,W,F,K,S", "interp": "N,C,H,W"}


def parse(problem):
    """(kind, {field: value}) of a PROBLEM; ValueError naming it if bad."""
    kind, _, sizes = problem.rpartition(":")
    kind = kind or "conv"
    if kind not in FIELDS:
        raise ValueError("%s: unknown kind %r (one of %s)" %
                         (problem, kind, ", ".join(FIELDS)))
    names = FIELDS[kind].split(",")
    values = sizes.split(",")
    if len(values) != len(names) or not all(v.isdigit() for v in values):
        raise ValueError("%s: %s takes %s" % (problem, kind, FIELDS[kind]))
    return kind, dict(zip(names, (int(v) for v in values)))


def pad(v):
    """The padding of every kind with a window: (K-1)//2, as much as the
    window allows while the output keeps the input's size over the
    stride."""
    return (v["K"] - 1) // 2 if "K" in v else 0


def output_padding(v):
    """The deconvolution's output_padding making its output H*S."""
    k, s = v["K"], v["S"]
    return s + 2 * pad(v) - k


def bench_args(problem):
    """distconv_bench's driver options and descriptor for the problem."""
    kind, v = parse(problem)
    p = pad(v)
    if kind == "interp":
        return ["--interp", "mb%(N)dic%(C)dih%(H)diw%(W)d" % v]
    if kind == "pool":
        return ["--pool", "--alg=max",
                "mb%(N)dic%(C)dih%(H)diw%(W)dkh%(K)dkw%(K)dsh%(S)dsw%(S)d" % v
                + "ph%dpw%d" % (p, p)]
    if kind == "deconv":
        return ["--deconv",
                "mb%dic%dih%diw%doc%doh%dow%dkh%dkw%dsh%dsw%dph%dpw%d" % (
                    v["N"], v["C"], v["H"], v["W"], v["F"], v["H"] * v["S"],
                    v["W"] * v["S"], v["K"], v["K"], v["S"], v["S"], p, p)]
    return ["--conv",
            "mb%dic%dih%diw%doc%doh%dow%dkh%dkw%dph%dpw%d" % (
                v["N"], v["C"], v["H"], v["W"], v["F"], v["H"], v["W"],
                v["K"], v["K"], p, p)]


def make_layer(nn, problem, grid=None):
    """The problem's module from `nn` (torch.nn, or distconv.nn on grid)."""
    kind, v = parse(problem)
    args = (grid,) if grid is not None else ()
    p = pad(v)
    if kind == "interp":
        return nn.Upsample(*args, scale_factor=2, mode="bilinear",
                           align_corners=False)
    if kind == "pool":
        return nn.MaxPool2d(*args, v["K"], v["S"], padding=p)
    if kind == "deconv":
        return nn.ConvTranspose2d(*args, v["C"], v["F"], v["K"], v["S"],
                                  padding=p, output_padding=output_padding(v))
    return nn.Conv2d(*args, v["C"], v["F"], v["K"], padding=p)


def step_loop(conv, x, dy, sync, warmup=2, reps=10):
    """Per-step milliseconds of y = conv(x); y.backward(dy) (x requires
    grad, so backward computes the input gradient too; x.grad is dropped
    before each step, as for an activation inside a network, so the step
    times no gradient accumulation)."""
    times = []
    for i in range(warmup + reps):
        x.grad = None
        sync()
        start = time.perf_counter()
        y = conv(x)
        y.backward(dy)
        times.append(time.perf_counter() - start)
    return [1e3 * t for t in times[warmup:]]


def worker_distconv(problem):
    import torch
    from mpi4py import MPI
    import distconv
    comm = MPI.COMM_WORLD
    _, v = parse(problem)
    grid = distconv.ProcessGrid(comm, (1, 1, comm.size, 1))
    torch.manual_seed(0)
    conv = make_layer(distconv.nn, problem, grid)
    x = distconv.shard(grid, torch.randn(v["N"], v["C"], v["H"],
                                         v["W"])).requires_grad_()
    y = conv(x)
    dy = torch.randn(y.shape).contiguous(memory_format=torch.channels_last)
    times = step_loop(conv, x, dy, comm.Barrier)
    slowest = [comm.allreduce(t, op=MPI.MAX) for t in times]
    # The same steps again under distconv.Profiler: the time inside the
    # library's calls against the whole step, in the same steps (what the
    # front end adds, free of the drift between separate runs).
    prof = distconv.Profiler(grid, conv)
    for _ in range(10):
        x.grad = None
        comm.Barrier()
        with prof.step():
            y = conv(x)
            y.backward(dy)
    # Each rank's own figures (merged over ranks, the rows' slowest ranks
    # may differ from the step's); the rank where the front end adds most.
    mine = json.loads(prof.summary(distconv.ProcessGrid(
        MPI.COMM_SELF, (1, 1, 1, 1)))[1])
    prof.close()
    inside = mine["step_ms"] - mine["unaccounted_ms"]
    in_process = comm.allreduce(
        mine["step_ms"] / inside if inside > 0 else math.inf, op=MPI.MAX)
    if comm.rank == 0:
        print(json.dumps({"median_ms": statistics.median(slowest),
                          "min_ms": min(slowest),
                          "in_process": in_process}))


def worker_torch(problem, threads):
    import torch
    torch.set_num_threads(threads)
    _, v = parse(problem)
    torch.manual_seed(0)
    conv = make_layer(torch.nn, problem)
    x = torch.randn(v["N"], v["C"], v["H"], v["W"], requires_grad=True)
    dy = torch.randn(conv(x).shape)
    times = step_loop(conv, x, dy, lambda: None)
    print(json.dumps({"median_ms": statistics.median(times),
                      "min_ms": min(times)}))


def last_json(output):
    """(median, fastest) milliseconds of the last JSON line, and the
    in-process step / library ratio where the line has one."""
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            r = json.loads(line)
            return r["median_ms"], r["min_ms"], r.get("in_process")
    raise RuntimeError("no result in:\n" + output)


def run(cmd, env=None):
    out = subprocess.run(cmd, cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    return last_json(out.stdout)


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--ranks", default="1,2")
    a.add_argument("--worker", choices=["distconv", "torch"])
    a.add_argument("--threads", type=int, default=1)
    a.add_argument("problems", nargs="*", default=PROBLEMS)
    args = a.parse_args()
    for problem in args.problems:
        try:
            parse(problem)
        except ValueError as e:
            a.error(str(e))
    if args.worker == "distconv":
        return worker_distconv(args.problems[0])
    if args.worker == "torch":
        return worker_torch(args.problems[0], args.threads)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python"), os.path.join(ROOT, "bazel-bin",
                                                    "python")]))
    me = [sys.executable or "/usr/bin/python3", os.path.abspath(__file__)]
    for problem in args.problems:
        for p in (int(v) for v in args.ranks.split(",")):
            rows = []
            for r in range(args.rounds):
                def cpp_run(how):
                    return run(MPIRUN + ["-np", str(p), "bazel-bin/perf/"
                                         "distconv_bench", "--mode=perf",
                                         "--json", "--input=" + how] +
                               bench_args(problem))

                def py_run():
                    return run(MPIRUN + ["-np", str(p)] + me +
                               ["--worker=distconv", problem], env)
                # The C++ layer in place runs right before or right after
                # the Python layer, in turns, so that a drift of the
                # machine's speed favours neither.
                if r % 2 == 0:
                    buf = cpp_run("buffers")
                    cpp = cpp_run("in_place")
                    py = py_run()
                else:
                    py = py_run()
                    cpp = cpp_run("in_place")
                    buf = cpp_run("buffers")
                th = run(me + ["--worker=torch", "--threads=%d" % p,
                               problem])
                rows.append((cpp, py, th, buf))
                print("%s, %d ranks, round %d: C++ in place %.1f ms, with "
                      "buffers %.1f ms | Python %.1f ms | torch.nn %d "
                      "threads %.1f ms" % (problem, p, r, cpp[0], buf[0],
                                           py[0], p, th[0]), flush=True)
            cpp, py, th, buf = (statistics.median(t[0] for t in col)
                                for col in zip(*rows))
            fast_cpp, fast_py = (min(t[1] for t in col)
                                 for col in list(zip(*rows))[:2])
            # Each round's two neighbouring runs, compared.
            paired = statistics.median(t[1][0] / t[0][0] for t in rows)
            in_process = statistics.median(t[1][2] for t in rows)
            print("== %s, %d ranks, medians over %d rounds: C++ %.1f ms "
                  "(with buffers %.1f ms) | Python %.1f ms | torch.nn "
                  "%.1f ms | python/C++ %.3f | buffers/in place %.3f | "
                  "torch/C++ %.2f | torch/python %.2f | fastest steps: "
                  "C++ %.1f ms, Python %.1f ms, python/C++ %.3f | "
                  "python/C++ paired by round (median) %.3f | "
                  "in process: step / library calls %.3f" % (
                      problem, p, args.rounds, cpp, buf, py, th, py / cpp,
                      buf / cpp, th / cpp, th / py, fast_cpp, fast_py,
                      fast_py / fast_cpp, paired, in_process), flush=True)


if __name__ == "__main__":
    main()
