#!/usr/bin/python3
"""The PyTorch front end against the C++ layer and against PyTorch, side
by side in one run: one convolution's training step (forward with bias,
backward-data, backward-weights with bias), fp32, H split over the ranks.

    perf/torch_bench.py [--rounds=R] [--ranks=1,2] [PROBLEM ...]

For each problem and rank count P, each round times, one after another:
  - distconv_bench --mode=perf on P ranks (the C++ layer; its median);
  - distconv.nn.Conv2d in a PyTorch loop on P ranks (y = conv(x);
    y.backward(dy); median of the slowest rank over 10 steps after 2);
  - torch.nn.Conv2d on one process with P threads (the same loop).
It prints every round's figures, then the medians over rounds and the
ratios python/C++ (the front end's cost) and torch/C++, torch/python.
Needs `bazel build //perf:distconv_bench //python:distconv` first; runs
from the repository root (one oneDNN thread per rank).
PROBLEM is N,C,H,W,F,K (default 1,16,1024,1024,16,3 and 8,64,128,128,64,3).
"""
import argparse
import json
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


def parse(problem):
    n, c, h, w, f, k = (int(v) for v in problem.split(","))
    return n, c, h, w, f, k


def descriptor(problem):
    n, c, h, w, f, k = parse(problem)
    p = k // 2
    return ("mb%dic%dih%diw%doc%doh%dow%dkh%dkw%dph%dpw%d" %
            (n, c, h, w, f, h, w, k, k, p, p))


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
    n, c, h, w, f, k = parse(problem)
    grid = distconv.ProcessGrid(comm, (1, 1, comm.size, 1))
    torch.manual_seed(0)
    conv = distconv.nn.Conv2d(grid, c, f, k, padding=k // 2)
    x = distconv.shard(grid, torch.randn(n, c, h, w)).requires_grad_()
    y = conv(x)
    dy = torch.randn(y.shape).contiguous(memory_format=torch.channels_last)
    times = step_loop(conv, x, dy, comm.Barrier)
    slowest = [comm.allreduce(t, op=MPI.MAX) for t in times]
    if comm.rank == 0:
        print(json.dumps({"median_ms": statistics.median(slowest)}))


def worker_torch(problem, threads):
    import torch
    torch.set_num_threads(threads)
    n, c, h, w, f, k = parse(problem)
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(c, f, k, padding=k // 2)
    x = torch.randn(n, c, h, w, requires_grad=True)
    dy = torch.randn(n, f, h, w)
    times = step_loop(conv, x, dy, lambda: None)
    print(json.dumps({"median_ms": statistics.median(times)}))


def last_json(output):
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            return json.loads(line)["median_ms"]
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
                cpp = run(MPIRUN + ["-np", str(p), "bazel-bin/perf/"
                                    "distconv_bench", "--mode=perf",
                                    "--json", descriptor(problem)])
                py = run(MPIRUN + ["-np", str(p)] + me +
                         ["--worker=distconv", problem], env)
                th = run(me + ["--worker=torch", "--threads=%d" % p,
                               problem])
                rows.append((cpp, py, th))
                print("%s, %d ranks, round %d: C++ %.1f ms | Python %.1f ms "
                      "| torch.nn %d threads %.1f ms" % (problem, p, r, cpp,
                                                         py, p, th),
                      flush=True)
            cpp, py, th = (statistics.median(col) for col in zip(*rows))
            print("== %s, %d ranks, medians over %d rounds: C++ %.1f ms | "
                  "Python %.1f ms | torch.nn %.1f ms | python/C++ %.3f | "
                  "torch/C++ %.2f | torch/python %.2f" % (
                      problem, p, args.rounds, cpp, py, th, py / cpp,
                      th / cpp, th / py), flush=True)


if __name__ == "__main__":
    main()
