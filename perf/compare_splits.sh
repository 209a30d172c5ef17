#!/bin/bash
# Which split wins for one convolution: the same global problem (fp32,
# forward + backward-data + backward-weights, 1 thread per rank) on grids
# that split samples, space, or channels and filters (each scheme; the
# stationary-weights 2x2 split on 4 ranks), and their hybrids, at each rank
# count given, plus 1 rank for the speedups.
# Rounds are interleaved so that machine noise hits every configuration.
# Prints each run's JSON line, then per configuration the median time over
# the rounds, the median time blocked on communication, and the speedup
# over 1 rank. More ranks than cores run oversubscribed (said in the table).
#   perf/compare_splits.sh [ROUNDS] [RANKS...]
#   PROBLEM=mb8ic256id16ih16iw16oc256kd3kh3kw3pd1ph1pw1 perf/compare_splits.sh 3 2 4
# The default problem is that late 3D layer (8x256->256 16^3 3x3x3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds="${1:-3}"
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
problem="${PROBLEM:-mb8ic256id16ih16iw16oc256od16oh16ow16kd3kh3kw3pd1ph1pw1}"
reps="${REPS:-3}"

# A grid of P ranks for the problem's rank (NxCxHxW or NxCxDxHxW) with P
# at the given positions: grid P "N C" -> "2x2x1x1x1" for P=4.
spatial_dims=$(echo "$problem" | grep -q 'id[0-9]' && echo 3 || echo 2)
grid() {  # grid N C D [H W]: one factor per dimension, the rest 1
  local out=() d
  for d in "$@"; do out+=("$d"); done
  while [ ${#out[@]} -lt $((spatial_dims + 2)) ]; do out+=(1); done
  local IFS=x
  echo "${out[*]}"
}
# Configurations: "label|grid|flags".
configs=("1 rank|$(grid 1 1 1)|")
for p in "${ranks[@]}"; do
  configs+=("samples|$(grid "$p" 1 1)|"
            "space|$(grid 1 1 "$p")|"
            "channels, stationary output|$(grid 1 "$p" 1)|--channels=stationary_output"
            "channels, stationary input|$(grid 1 "$p" 1)|--channels=stationary_input")
  if [ "$p" -eq 4 ]; then
    configs+=("channels, stationary weights|$(grid 1 4 1)|--channels=stationary_weights"
              "samples x channels|$(grid 2 2 1)|--channels=stationary_output"
              "channels x space|$(grid 1 2 2)|--channels=stationary_output"
              "samples x space|$(grid 2 1 2)|")
  fi
done

bazel build //perf:distconv_bench >&2
bench=$(bazel info bazel-bin 2>/dev/null)/perf/distconv_bench
export OMPI_MCA_plm=isolated
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none
     --mca mpi_yield_when_idle 1 -x OMP_NUM_THREADS=1)
field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cores=$(nproc)
declare -A t=() w=()
for ((r = 1; r <= rounds; r++)); do
  for i in "${!configs[@]}"; do
    IFS='|' read -r label g flags <<< "${configs[$i]}"
    np=$(echo "$g" | tr x '\n' | awk '{p *= $1} BEGIN {p = 1} END {print p}')
    read -r -a extra <<< "$flags"
    line=$("${mpi[@]}" -np "$np" "$bench" --mode=perf --json --warmup=1 \
           --reps="$reps" --grid="$g" "${extra[@]}" "$problem")
    echo "$line"
    t[$i]+="$(echo "$line" | field median_ms) "
    w[$i]+="$(echo "$line" | field comm_wait_ms) "
  done
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
base=$(m "${t[0]}")
echo "== $problem, fp32, all passes: medians over $rounds rounds of $reps runs ($cores cores)"
printf "%-30s %-12s %5s %10s %14s %8s\n" split grid ranks "time ms" "comm wait ms" speedup
for i in "${!configs[@]}"; do
  IFS='|' read -r label g flags <<< "${configs[$i]}"
  np=$(echo "$g" | tr x '\n' | awk '{p *= $1} BEGIN {p = 1} END {print p}')
  note=""
  [ "$np" -le "$cores" ] || note=" (oversubscribed)"
  printf "%-30s %-12s %5s %10.1f %14.1f %8.2f%s\n" "$label" "$g" "$np" \
    "$(m "${t[$i]}")" "$(m "${w[$i]}")" \
    "$(awk -v a="$base" -v b="$(m "${t[$i]}")" 'BEGIN {print a / b}')" "$note"
done
