#!/bin/bash
# The main job, for a new user on Debian 12: installs what is missing,
# builds, and runs a strong-scaling demonstration of the distributed
# convolution on a scientific-size image: forward (with bias),
# backward-data and backward-weights of a 16 -> 16 channel 3x3 convolution
# on 1 x 16 x 2048 x 2048 (fp32, oneDNN), split along H over 1 and 2 ranks
# (and 4 where the machine has 4 cores). Each run is first checked against
# the same layer on one process, then timed; a table of time, speedup,
# parallel efficiency and communication share ends it.
#   examples/demo.sh [PROBLEM]     (benchdnn syntax; default below)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
problem="${1:-mb1ic16ih2048iw2048oc16oh2048ow2048kh3kw3ph1pw1n\"demo\"}"

echo "[demo] installing missing packages (if any)"
third_party/install_packages.sh
echo "[demo] building //perf:distconv_bench"
bazel build //perf:distconv_bench
bench=$(bazel info bazel-bin)/perf/distconv_bench

export OMPI_MCA_plm=isolated  # launch locally even where no ssh is installed
cores=$(nproc)
rank_counts="1 2"
if [ "$cores" -ge 4 ]; then rank_counts="1 2 4"; fi
run() {  # run RANKS ARGS...: one rank per core, one oneDNN thread per rank
  local ranks=$1
  shift
  mpirun --allow-run-as-root --oversubscribe -np "$ranks" \
    -x OMP_NUM_THREADS=1 "$bench" "$@"
}
json_field() {  # json_field NAME < line
  sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p"
}

echo "[demo] problem $problem on $cores cores; ranks: $rank_counts"
table=()
base_ms=""
step=0
steps=$(( $(echo "$rank_counts" | wc -w) * 2 ))
for ranks in $rank_counts; do
  step=$((step + 1))
  echo "[demo] step $step/$steps: $ranks rank(s), checking against one process"
  check=$(run "$ranks" --mode=correctness --check=serial --json "$problem")
  status=$(echo "$check" | json_field status)
  err=$(echo "$check" | json_field max_rel_err)
  echo "[demo]   $status (max relative error $err)"
  if [ "$status" != "PASS" ]; then
    echo "$check" >&2
    exit 1
  fi
  step=$((step + 1))
  echo "[demo] step $step/$steps: $ranks rank(s), timing 10 runs after 2 warm-ups"
  perf=$(run "$ranks" --mode=perf --json "$problem")
  ms=$(echo "$perf" | json_field median_ms)
  wait_ms=$(echo "$perf" | json_field comm_wait_ms)
  gflops=$(echo "$perf" | json_field gflops)
  grid=$(echo "$perf" | json_field grid)
  [ -z "$base_ms" ] && base_ms=$ms
  table+=("$(awk -v r="$ranks" -v g="$grid" -v ms="$ms" -v b="$base_ms" \
    -v w="$wait_ms" -v gf="$gflops" 'BEGIN {
      printf "%5d  %-10s %10.1f %10.1f %8.2f %10.0f%% %9.1f%%\n",
        r, g, ms, gf, b / ms, 100 * b / ms / r, 100 * w / ms }')")
  echo "[demo]   median $ms ms"
done

echo
echo "Strong scaling, fwd + bwd-data + bwd-weights, fp32, $problem"
printf "%5s  %-10s %10s %10s %8s %11s %10s\n" ranks grid "time ms" GFLOP/s \
  speedup efficiency "comm wait"
for line in "${table[@]}"; do echo "$line"; done
