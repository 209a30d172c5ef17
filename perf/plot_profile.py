#!/usr/bin/env python3
"""A table and a plot of a training step's profile (the JSON an example
writes with --profile-json=FILE, layers/profile.h).

    plot_profile.py PROFILE_JSON OUT_DIR

Writes OUT_DIR/profile.md: the rows by time, each with its share of the
step, GFLOP/s and waits, then the time per pass and per kind of layer
(the part of a layer's name before its first dot: "enc1a.conv" ->
"conv"); and, when matplotlib is there, OUT_DIR/profile.png: each
layer's milliseconds per step, stacked by pass, with the compute and the
waits apart. Prints the markdown too.
"""
import json
import os
import sys
from collections import OrderedDict

PASSES = ["forward", "forward-backward", "backward", "backward-data", "backward-weights",
          "update", "other"]


def load(path):
    with open(path) as f:
        p = json.load(f)
    for key in ("ranks", "steps", "step_ms", "rows"):
        if key not in p:
            raise ValueError("%s: no %r: not a profile (--profile-json)"
                             % (path, key))
    return p


def kind(layer):
    """ "enc1a.conv" -> "conv", "up" -> "up"."""
    return layer.split(".", 1)[1] if "." in layer else layer


def markdown(p):
    gflop = sum(r["gflops"] * r["ms_per_step"] * 1e-3 for r in p["rows"])
    out = ["# Profile: %.3f ms per step, the slowest of %d ranks, %d steps"
           % (p["step_ms"], p["ranks"], p["steps"]), "",
           "%.3f GFLOP per step (all ranks): %.1f GFLOP/s over the step." % (
               gflop, gflop / (p["step_ms"] * 1e-3) if p["step_ms"] else 0),
           "",
           "| layer | pass | ms/step | share | GFLOP/s | MB/step | "
           "halo wait ms | collective wait ms |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(p["rows"], key=lambda r: -r["ms_per_step"]):
        out.append("| %s | %s | %.3f | %.1f%% | %.1f | %.1f | %.3f | %.3f |" % (
            r["layer"], r["pass"], r["ms_per_step"], 100 * r["share"],
            r["gflops"], r["mb_per_step"], r["halo_wait_ms"],
            r["collective_wait_ms"]))
    out.append("| (in no row) | | %.3f | %.1f%% | | | | |" % (
        p["unaccounted_ms"],
        100 * p["unaccounted_ms"] / p["step_ms"] if p["step_ms"] else 0))
    for title, key in (("pass", lambda r: r["pass"]),
                       ("kind of layer", lambda r: kind(r["layer"]))):
        sums = OrderedDict()
        for r in p["rows"]:
            s = sums.setdefault(key(r), [0.0, 0.0])
            s[0] += r["ms_per_step"]
            s[1] += r["gflops"] * r["ms_per_step"] * 1e-3  # GFLOP per step
        out += ["", "| %s | ms/step | share | GFLOP/s |" % title,
                "|---|---|---|---|"]
        for name, (ms, gflop) in sorted(sums.items(), key=lambda kv: -kv[1][0]):
            out.append("| %s | %.3f | %.1f%% | %.1f |" % (
                name, ms, 100 * ms / p["step_ms"] if p["step_ms"] else 0,
                gflop / (ms * 1e-3) if ms > 0 else 0))
    return "\n".join(out) + "\n"


def plot(p, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    layers = list(OrderedDict((r["layer"], None) for r in p["rows"]))
    fig, ax = plt.subplots(figsize=(10, 0.3 * len(layers) + 1.5))
    left = [0.0] * len(layers)
    for pass_ in PASSES:
        ms = [0.0] * len(layers)
        for r in p["rows"]:
            if r["pass"] == pass_:
                ms[layers.index(r["layer"])] += (
                    r["ms_per_step"] - r["halo_wait_ms"]
                    - r["collective_wait_ms"])
        if any(ms):
            ax.barh(layers, ms, left=left, label=pass_)
            left = [a + b for a, b in zip(left, ms)]
    waits = [0.0] * len(layers)
    for r in p["rows"]:
        waits[layers.index(r["layer"])] += (r["halo_wait_ms"]
                                            + r["collective_wait_ms"])
    if any(waits):
        ax.barh(layers, waits, left=left, label="blocked on communication",
                color="grey")
    ax.invert_yaxis()
    ax.set_xlabel("ms per step (the slowest rank)")
    ax.set_title("%.1f ms per step on %d ranks" % (p["step_ms"], p["ranks"]))
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_profile.py PROFILE_JSON OUT_DIR")
    try:
        p = load(sys.argv[1])
    except (OSError, ValueError) as e:
        sys.exit("plot_profile.py: %s" % e)
    os.makedirs(sys.argv[2], exist_ok=True)
    text = markdown(p)
    with open(os.path.join(sys.argv[2], "profile.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    png = os.path.join(sys.argv[2], "profile.png")
    if plot(p, png):
        print("wrote", png)
    else:
        print("no matplotlib: no plot")


if __name__ == "__main__":
    main()
