#!/bin/bash
# Strong and weak scaling of the training examples and of one convolution
# layer, on 1, 2 and 4 ranks (one thread per rank; runs with more ranks than
# cores are oversubscribed, and the tables say so). One command writes the
# raw results, the tables and the plots:
#   perf/scaling.sh [OUT_DIR]        (default /tmp/distconv-scaling)
# OUT_DIR/scaling.csv   one row per run
# OUT_DIR/scaling.md    tables: time per step, speedup (strong) or
#                       efficiency (weak), and the breakdown of rank 0's
#                       time into compute, halo-exchange wait and
#                       gradient-allreduce wait
# OUT_DIR/*.png         the plots (python3-matplotlib, installed if missing)
# OUT_DIR/machine.txt   the performance model's constants, calibrated here
#                       first (perf/model/calibrate); every run's modelled
#                       time (perf/model/predict) sits beside its measured
#                       one, and runs with --grid=auto use the planner
# STEPS=K sets the examples' steps (default 6; the first is not timed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-/tmp/distconv-scaling}"
steps="${STEPS:-6}"
mkdir -p "$out"

third_party/install_packages.sh
# Debian's python3 (the one python3-matplotlib installs into), not another
# python3 first in PATH.
py=/usr/bin/python3
if ! "$py" -c "import matplotlib" 2>/dev/null; then
  if ((EUID == 0)); then
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-matplotlib
  else
    echo "perf/scaling.sh: plots need python3-matplotlib (apt-get install python3-matplotlib)" >&2
  fi
fi
bazel build //examples:segmentation //examples:cosmoflow //perf:distconv_bench \
  //perf/model:calibrate //perf/model:predict
bin=$(bazel info bazel-bin)
export OMPI_MCA_plm=isolated
cores=$(nproc)
mpirun_() {
  mpirun --allow-run-as-root --oversubscribe --bind-to none \
    --mca mpi_yield_when_idle 1 -x OMP_NUM_THREADS=1 "$@"
}
machine="$out/machine.txt"
mpirun_ -np 2 "$bin/perf/model/calibrate" --out="$machine" >&2

csv="$out/scaling.csv"
echo "study,workload,split,ranks,cores,grid,ms_per_step,images_per_s,halo_wait_ms,allreduce_wait_ms,model_ms" > "$csv"

run() {  # run STUDY WORKLOAD SPLIT RANKS GRID BINARY ARGS...
  local study=$1 workload=$2 split=$3 ranks=$4 grid=$5 binary=$6
  shift 6
  echo "[scaling] $study $workload $split: $ranks rank(s), grid $grid" >&2
  # The model's prediction of the same run (the planner's grids for auto).
  local model=() extra=()
  case "$binary" in
    "$seg") model=(--network=segmentation "$@") extra=(--machine="$machine") ;;
    "$cosmo") model=(--network=cosmoflow "$@") extra=(--machine="$machine") ;;
    *) model=(--conv="${*: -1}") ;;  # distconv_bench: the descriptor
  esac
  local line predicted
  line=$(mpirun_ -np "$ranks" "$binary" --grid="$grid" "$@" "${extra[@]}" |
    grep -E '^(result )?\{' | tail -1)
  predicted=$("$bin/perf/model/predict" --machine="$machine" "${model[@]}" \
    --grid="$grid" --ranks="$ranks" | grep '^result' | tail -1)
  "$py" - "$study" "$workload" "$split" "$ranks" "$cores" "$grid" "$line" \
    "$predicted" >> "$csv" <<'PY'
import json, sys
study, workload, split, ranks, cores, grid, line, predicted = sys.argv[1:]
r = json.loads(line[line.index("{"):])
model = json.loads(predicted[predicted.index("{"):])["ms_per_step"]
if "median_ms" in r:  # distconv_bench: one layer, all passes
    ms, images = r["median_ms"], float("nan")
    halo, allreduce = r["comm_wait_ms"], 0.0  # halo and allreduce together
else:
    ms, images = r["ms_per_step"], r["images_per_s"]
    halo, allreduce = r["halo_wait_ms"], r["allreduce_wait_ms"]
print(f"{study},{workload},{split},{ranks},{cores},{grid},{ms},{images},{halo},{allreduce},{model}")
PY
}

seg="$bin/examples/segmentation"
cosmo="$bin/examples/cosmoflow"
bench="$bin/perf/distconv_bench"
conv() {  # conv HEIGHT: 1 x 16 x HEIGHT x 512, 3x3, 16 -> 16
  echo "mb1ic16ih${1}iw512oc16oh${1}ow512kh3kw3ph1pw1n\"scaling\""
}

# Strong scaling: one global problem. The 1-rank run (split "none") is
# every split's base.
segs="segmentation 2x18x256^2" cosmos="cosmoflow 4x4x64^3"
convs="conv 1x16x1024x512"
run strong "$segs" none 1 1x1x1x1 "$seg" --steps="$steps"
run strong "$cosmos" none 1 1x1x1x1x1 "$cosmo" --size=64 --steps="$steps"
run strong "$convs" none 1 1x1x1x1 "$bench" --mode=perf --json "$(conv 1024)"
for p in 2 4; do
  run strong "$segs" space "$p" "1x1x${p}x1" "$seg" --steps="$steps"
  run strong "$cosmos" space "$p" "1x1x${p}x1x1" "$cosmo" --size=64 --steps="$steps"
  run strong "$convs" space "$p" "1x1x${p}x1" "$bench" --mode=perf --json "$(conv 1024)"
  run strong "$cosmos" samples "$p" "${p}x1x1x1x1" "$cosmo" --size=64 --steps="$steps"
done
run strong "$segs" samples 2 2x1x1x1 "$seg" --steps="$steps"
# The planner's grids per unit (--grid=auto, from the calibrated machine).
for p in 2 4; do
  run strong "$segs" planned "$p" auto "$seg" --steps="$steps"
  run strong "$cosmos" planned "$p" auto "$cosmo" --size=64 --steps="$steps"
done
run strong "$segs" "samples x space" 4 2x1x2x1 "$seg" --steps="$steps"
run strong "$cosmos" "samples x space" 4 2x1x2x1x1 "$cosmo" --size=64 --steps="$steps"
# Weak scaling: one shard per rank (2x18x256^2 and 4x4x32^3 per rank;
# 1x16x512x512 per rank for the layer). CosmoFlow's volumes are cubes, so
# it grows by samples only.
segw="segmentation 2x18x256^2 per rank" cosmow="cosmoflow 4x4x32^3 per rank"
convw="conv 1x16x512x512 per rank"
run weak "$segw" none 1 1x1x1x1 "$seg" --steps="$steps"
run weak "$cosmow" none 1 1x1x1x1x1 "$cosmo" --steps="$steps"
run weak "$convw" none 1 1x1x1x1 "$bench" --mode=perf --json "$(conv 512)"
for p in 2 4; do
  run weak "$segw" space "$p" "1x1x${p}x1" "$seg" --height=$((256 * p)) --steps="$steps"
  run weak "$segw" samples "$p" "${p}x1x1x1" "$seg" --samples=$((2 * p)) --steps="$steps"
  run weak "$cosmow" samples "$p" "${p}x1x1x1x1" "$cosmo" --samples=$((4 * p)) --steps="$steps"
  run weak "$convw" space "$p" "1x1x${p}x1" "$bench" --mode=perf --json "$(conv $((512 * p)))"
done

"$py" perf/plot_scaling.py "$csv" "$out"
echo "[scaling] wrote $csv, $out/scaling.md and the plots in $out"
