#!/usr/bin/env python3
"""Tables and plots of perf/scaling.sh's results.

    plot_scaling.py SCALING_CSV OUT_DIR

Writes OUT_DIR/scaling.md (one table per study and workload: time per
step, speedup over 1 rank for strong scaling or efficiency for weak
scaling, rank 0's time split into compute, halo-exchange wait and
gradient-allreduce wait, and the performance model's prediction with its
error; then the model's error over all runs) and, when matplotlib is
there, strong.png, weak.png, breakdown.png and model.png.
"""
import csv
import sys
from collections import OrderedDict


def load(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("ranks", "cores"):
            r[k] = int(r[k])
        for k in ("ms_per_step", "images_per_s", "halo_wait_ms",
                  "allreduce_wait_ms", "model_ms"):
            r[k] = float(r[k])
        r["compute_ms"] = r["ms_per_step"] - r["halo_wait_ms"] - r["allreduce_wait_ms"]
    return rows


def groups(rows, study):
    """workload -> split -> its runs by ranks, the 1-rank run (split "none")
    first: the base of every split's speedup or efficiency."""
    out = OrderedDict()
    mine = [r for r in rows if r["study"] == study]
    for r in mine:
        if r["split"] != "none":
            out.setdefault(r["workload"], OrderedDict()).setdefault(r["split"], [])
    for workload, splits in out.items():
        base = [r for r in mine if r["workload"] == workload and r["split"] == "none"]
        for split in splits:
            runs = [r for r in mine if r["workload"] == workload and r["split"] == split]
            splits[split] = base[:1] + sorted(runs, key=lambda r: r["ranks"])
    return out


def ratio(base, r):
    """Strong scaling: the speedup t1 / tP; weak: the efficiency t1 / tP."""
    return base["ms_per_step"] / r["ms_per_step"]


def error(r):
    """The model's relative error on a run: (model - measured) / measured."""
    return (r["model_ms"] - r["ms_per_step"]) / r["ms_per_step"]


def model_summary(rows):
    lines = ["## The performance model against these runs\n",
             "| runs | mean abs. error | largest error |", "|---|---|---|"]
    for name, pick in (("all", lambda r: True),
                       ("1 rank", lambda r: r["ranks"] == 1),
                       ("within the cores",
                        lambda r: 1 < r["ranks"] <= r["cores"]),
                       ("oversubscribed", lambda r: r["ranks"] > r["cores"])):
        errs = [error(r) for r in rows if pick(r)]
        if errs:
            worst = max(errs, key=abs)
            lines.append(f"| {name} ({len(errs)}) | "
                         f"{100 * sum(abs(e) for e in errs) / len(errs):.0f}% | "
                         f"{100 * worst:+.0f}% |")
    return "\n".join(lines) + "\n"


def table(rows, study):
    lines = []
    name = "speedup" if study == "strong" else "efficiency"
    for workload, splits in groups(rows, study).items():
        lines.append(f"### {study} scaling: {workload}\n")
        lines.append(f"| split | ranks | grid | ms/step | {name} | compute ms | "
                     "halo wait ms | allreduce wait ms | model ms | "
                     "model error |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        base_shown = False
        for split, runs in splits.items():
            for r in runs:
                if r["ranks"] == 1:
                    if base_shown:
                        continue
                    base_shown = True
                over = " (oversubscribed)" if r["ranks"] > r["cores"] else ""
                lines.append(
                    f"| {r['split']} | {r['ranks']}{over} | {r['grid']} | "
                    f"{r['ms_per_step']:.1f} | {ratio(runs[0], r):.2f} | "
                    f"{r['compute_ms']:.1f} | {r['halo_wait_ms']:.1f} | "
                    f"{r['allreduce_wait_ms']:.1f} | {r['model_ms']:.1f} | "
                    f"{100 * error(r):+.0f}% |")
        lines.append("")
    return "\n".join(lines)


def save(plt, fig, path):
    """Writes and closes one figure; returns its path."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plots(rows, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_scaling.py: no matplotlib; tables only", file=sys.stderr)
        return []
    written = []
    for study, ylabel in (("strong", "speedup over 1 rank"),
                          ("weak", "efficiency (t1 / tP)")):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        top = 1
        for workload, splits in groups(rows, study).items():
            for split, runs in splits.items():
                xs = [r["ranks"] for r in runs]
                ys = [ratio(runs[0], r) for r in runs]
                top = max(top, max(xs))
                ax.plot(xs, ys, marker="o", label=f"{workload}, {split}")
        if study == "strong":
            ax.plot([1, top], [1, top], "k--", linewidth=0.8, label="ideal")
        else:
            ax.axhline(1, color="k", linestyle="--", linewidth=0.8, label="ideal")
        cores = rows[0]["cores"]
        ax.axvline(cores, color="grey", linestyle=":", linewidth=0.8)
        ax.text(cores, ax.get_ylim()[0], f" {cores} cores", color="grey",
                va="bottom")
        ax.set_xlabel("ranks (one thread each)")
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted({r["ranks"] for r in rows}))
        ax.set_title(f"{study} scaling")
        ax.legend(fontsize=7)
        written.append(save(plt, fig, f"{out}/{study}.png"))
    # Breakdown of every run's time per step on rank 0.
    runs = rows
    fig, ax = plt.subplots(figsize=(max(7, 0.45 * len(runs)), 4.5))
    labels = [f"{r['study'][0]} {r['workload'].split()[0]} {r['split'][:2]} {r['grid']}"
              for r in runs]
    xs = range(len(runs))
    bottom = [0.0] * len(runs)
    for key, name in (("compute_ms", "compute"), ("halo_wait_ms", "halo wait"),
                      ("allreduce_wait_ms", "allreduce wait")):
        vals = [r[key] for r in runs]
        ax.bar(xs, vals, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=75, fontsize=6)
    ax.set_ylabel("ms per step (rank 0)")
    ax.set_yscale("log")
    ax.set_title("where the time goes")
    ax.legend(fontsize=7)
    written.append(save(plt, fig, f"{out}/breakdown.png"))
    # The model's prediction against the measurement, one point per run.
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for study, marker in (("strong", "o"), ("weak", "s")):
        mine = [r for r in rows if r["study"] == study]
        ax.scatter([r["ms_per_step"] for r in mine],
                   [r["model_ms"] for r in mine], marker=marker, label=study)
    lo = min(min(r["ms_per_step"], r["model_ms"]) for r in rows) * 0.8
    hi = max(max(r["ms_per_step"], r["model_ms"]) for r in rows) * 1.2
    ax.plot([lo, hi], [lo, hi], "k--", linewidth=0.8, label="exact")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured ms per step")
    ax.set_ylabel("modelled ms per step")
    ax.set_title("performance model vs. measurement")
    ax.legend(fontsize=7)
    written.append(save(plt, fig, f"{out}/model.png"))
    return written


def main():
    csv_path, out = sys.argv[1], sys.argv[2]
    rows = load(csv_path)
    text = ["# Scaling (perf/scaling.sh)\n",
            "Each row is one run; ms/step is the mean over the timed steps "
            "(layer: the median of the benchmark's runs, all passes). "
            "Compute is the time rank 0 was not blocked on a halo exchange "
            "or gradient allreduce (blocking collectives such as batch "
            "norm's count as compute); for the layer, 'halo wait' holds "
            "both waits.\n",
            table(rows, "strong"), table(rows, "weak"), model_summary(rows)]
    with open(f"{out}/scaling.md", "w") as f:
        f.write("\n".join(text))
    for p in plots(rows, out):
        print("wrote", p)


if __name__ == "__main__":
    main()
