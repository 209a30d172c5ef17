#!/usr/bin/python3
"""A training example's step against the same network in torch.nn, side by
side in one run: the C++ example on P ranks (one oneDNN thread each), the
torch.nn reference on one process with P threads, one after the other in
each round.

    perf/step_vs_torch.py [--rounds=3] [--ranks=1,2] [--precision=bf16]
                          [--grid=auto] EXAMPLE [ARGS...]

EXAMPLE is segmentation (reference: examples/torch_segmentation.py
--reference) or cosmoflow (reference: perf/torch_cosmoflow.py); ARGS go
to both (the network's options: --size, --samples, --width, ...; --steps,
default 10 here too). Both report the mean time of the steps after the
first. --precision goes to the C++ example only (its activations in
bf16; torch.nn stays fp32, and every line says so), as does --grid (its
layers' process grids: auto, the planner's, or a grid; default the
example's own). Prints every round,
then per rank count the medians over rounds and torch.nn / C++ (above 1:
the C++ example is faster). Needs `bazel
build //examples:segmentation //examples:cosmoflow`; runs from the
repository root.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
          "none", "--mca", "plm", "isolated", "-x", "OMP_NUM_THREADS=1"]
PY = "/usr/bin/python3"
REFERENCE = {
    "segmentation": [PY, "examples/torch_segmentation.py", "--reference"],
    "cosmoflow": [PY, "perf/torch_cosmoflow.py"],
}


def output(cmd, env=None):
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), out.returncode, out.stdout[-2000:],
            out.stderr[-2000:]))
    return out.stdout


def cpp_ms(text):
    """The example's 'result {...}' line: ms_per_step."""
    for line in reversed(text.splitlines()):
        if line.startswith("result {"):
            return json.loads(line[len("result "):])["ms_per_step"]
    raise RuntimeError("no result line in:\n" + text[-2000:])


def torch_ms(text):
    """The reference's mean step: a JSON line, or '... Y s per step)'."""
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return json.loads(line)["ms_per_step"]
        m = re.search(r"([0-9.]+) s per step", line)
        if m:
            return 1e3 * float(m.group(1))
    raise RuntimeError("no step time in:\n" + text[-2000:])


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--ranks", default="1,2")
    a.add_argument("--precision", choices=["f32", "bf16"], default="f32",
                   help="the C++ example's (torch.nn runs fp32)")
    a.add_argument("--grid", default="",
                   help="the C++ example's --grid (auto: the planner's)")
    a.add_argument("example", choices=sorted(REFERENCE))
    args, rest = a.parse_known_args()
    cpp_args = rest + ["--precision=" + args.precision]
    label = "C++" if args.precision == "f32" else "C++ (bf16)"
    if args.grid:
        cpp_args.append("--grid=" + args.grid)
        label += " --grid=" + args.grid
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python"), os.path.join(ROOT, "examples")]))
    binary = os.path.join("bazel-bin", "examples", args.example)
    if not os.path.exists(os.path.join(ROOT, binary)):
        sys.exit("no %s: bazel build //examples:%s first" % (
            binary, args.example))
    for p in (int(v) for v in args.ranks.split(",")):
        rows = []
        for r in range(args.rounds):
            cpp = cpp_ms(output(MPIRUN + ["-np", str(p), binary] + cpp_args))
            th = torch_ms(output(REFERENCE[args.example] +
                                 ["--threads=%d" % p] + rest, env))
            rows.append((cpp, th))
            print("%s %s, %d ranks, round %d: %s %.1f ms/step | torch.nn "
                  "%d threads %.1f ms/step" % (args.example, " ".join(rest),
                                               p, r, label, cpp, p, th),
                  flush=True)
        cpp, th = (statistics.median(c) for c in zip(*rows))
        print("== %s %s, %d ranks, medians over %d rounds: %s %.1f ms/step "
              "| torch.nn %.1f ms/step | torch.nn / C++ %.2f" % (
                  args.example, " ".join(rest), p, args.rounds, label, cpp,
                  th, th / cpp), flush=True)


if __name__ == "__main__":
    main()
