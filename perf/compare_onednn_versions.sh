#!/bin/bash
# Debian's oneDNN 2.6 against oneDNN 3.2 (PyPI's onednn-cpu-gomp, unpacked
# by third_party/install_packages.sh; the oneDNN distconv builds with), side
# by side in one run: the same bare convolution primitives
# (perf/onednn_primitives.cc built against each, //perf:onednn26_primitives
# and //perf:onednn_primitives) on one thread,
# forward, backward-data and backward-weights, fp32 and bf16, channels-last
# (nhwc) and oneDNN's blocked layout, rounds interleaved so that machine
# noise hits both versions. Prints the CPU, each round's figures, then a
# Markdown table of the medians over the rounds and the ratio 2.6 / 3.2
# (above 1: 3.2 faster), with the implementation each version chose
# (passes with only oneDNN's reference loops are not timed).
#   [REPS=N] [DTS="f32 bf16"] [LAYOUTS="nhwc blocked"] \
#     perf/compare_onednn_versions.sh [ROUNDS] [PROBLEM...]
# REPS: runs per problem and round (default 5); DTS, LAYOUTS: which types
# and layouts (default both of each).
# Default problems: the two standard ones of docs/performance.md and the
# convolutions of the segmentation U-Net at 256x256, batch 2, width 16.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds="${1:-3}"
shift || true
problems=("$@")
if [ ${#problems[@]} -eq 0 ]; then
  problems=(mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1
            mb8ic64ih128iw128oc64oh128ow128kh3kw3ph1pw1
            'mb2ic18ih256iw256oc16oh256ow256kh3kw3ph1pw1n"seg_in"'
            'mb2ic16ih256iw256oc16oh256ow256kh3kw3ph1pw1n"seg_16"'
            'mb2ic32ih128iw128oc32oh128ow128kh3kw3ph1pw1n"seg_32"'
            'mb2ic32ih256iw256oc16oh256ow256kh3kw3ph1pw1n"seg_dec"')
fi
bazel build //perf:onednn26_primitives //perf:onednn_primitives >&2
bin=$(bazel info bazel-bin 2>/dev/null)/perf
export OMP_NUM_THREADS=1
limit_s=60  # per problem and pass: a version that hangs is reported so
declare -A versions=([onednn26_primitives]=2.6 [onednn_primitives]=3.2)
declare -A hung=()
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "flags: $(grep -o 'avx512[a-z_0-9]*\|amx[a-z_0-9]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for dir in fwd bwd_d bwd_w; do
    for dt in ${DTS:-f32 bf16}; do
      for layout in ${LAYOUTS:-nhwc blocked}; do
        for tool in onednn26_primitives onednn_primitives; do
          for p in "${problems[@]}"; do
            key="$tool $dir $dt $layout $p"
            rc=124
            if [[ -z ${hung[$key]:-} ]]; then
              rc=0
              timeout "$limit_s" "$bin/$tool" --dir="$dir" --dt="$dt" \
                --layout="$layout" --reps="${REPS:-5}" "$p" | tee -a "$results" || rc=$?
            fi
            if ((rc == 124)); then
              hung[$key]=1  # not run again in later rounds
              printf '{"onednn": "%s", "problem": "%s", "dir": "%s", "dt": "%s", "layout": "%s", "impl": "", "median_ms": 0, "error": "no result in %s s"}\n' \
                "${versions[$tool]}" "${p//\"/\\\"}" "$dir" "$dt" "$layout" \
                "$limit_s" | tee -a "$results"
            fi
          done
        done
      done
    done
  done
done
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["problem"], r["dir"], r["dt"], r["layout"])
    v = runs.setdefault(key, {}).setdefault(r["onednn"][0], [])
    v.append((r["median_ms"], r["impl"], r["error"]))
print("\n| problem | pass | dt | layout | 2.6 ms | 3.2 ms | 2.6 / 3.2 "
      "| 2.6 implementation | 3.2 implementation |")
print("|---|---|---|---|---|---|---|---|---|")
for key, by in runs.items():
    cells = []
    for major in ("2", "3"):
        v = by.get(major, [])
        ok = [t for t, _, e in v if not e]
        if not v:
            impl = "-"
        elif not v[0][2]:
            impl = v[0][1]
        elif v[0][1]:  # only oneDNN's reference loops: not timed
            impl = v[0][1] + " (not timed)"
        elif v[0][2].startswith("no result"):
            impl = v[0][2]
        else:
            impl = "refused"
        cells.append((statistics.median(ok) if ok else None, impl))
    (a, ia), (b, ib) = cells
    ratio = "%.2f" % (a / b) if a and b else "-"
    fmt = lambda t: "%.1f" % t if t else "-"
    name = key[0].split('n"')[-1].rstrip('"') if 'n"' in key[0] else key[0]
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, key[1], key[2], key[3], fmt(a), fmt(b), ratio, ia, ib))
PY
