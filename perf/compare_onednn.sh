#!/bin/bash
# Side-by-side comparison of distconv with bare oneDNN primitives on the same
# global problem (fp32, forward + backward-data + backward-weights), in one
# run, rounds interleaved so that machine noise hits every configuration,
# each round starting one configuration later than the one before and
# every other round in reverse order (a configuration that always ran
# last would always find the machine in the same state):
#   oneDNN 1 thread      vs distconv 1 rank  x 1 thread
#   oneDNN 2 threads     vs distconv 2 ranks x 1 thread (H split)
# and distconv on 2 ranks with overlap off; for the convolutions (--conv,
# --deconv), distconv at 1 and 2 ranks again with --kernel-choice=measured
# (each piece's implementation timed when the layer is planned, against
# the default heuristic). Prints each run's JSON line, then
# medians over the rounds and the ratios (oneDNN time / distconv time: 1.0 is
# oneDNN's speed, above is faster), and the median of each round's own
# ratios ("paired"), which the drift between rounds does not move.
# Prints the CPU model and its vector extensions first, and for each
# problem how distconv computes each pass on rank 0 (the kernels oneDNN
# chose, from the first round's runs with --verbose).
#   perf/compare_onednn.sh [ROUNDS] [PROBLEM...]
# Other drivers: BENCH_FLAGS goes before the problem, e.g.
#   BENCH_FLAGS="--pool --alg=max" perf/compare_onednn.sh 3 mb1ic16ih1024kh3sh2ph1
#   BENCH_FLAGS=--deconv perf/compare_onednn.sh 3 mb1ic16ih512oc16kh4sh2ph1
# (the overlap-off run is the convolution's only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds="${1:-3}"
shift || true
problems=("$@")
read -r -a flags <<< "${BENCH_FLAGS:-}"
configs=(onednn1 distconv1 onednn2 distconv2)
[ ${#flags[@]} -gt 0 ] || configs+=(distconv2_off)
measured=0
if [ ${#flags[@]} -eq 0 ] || [ "${flags[*]}" = --deconv ]; then
  measured=1
  configs+=(distconv1_measured distconv2_measured)
fi
if [ ${#problems[@]} -eq 0 ]; then
  problems=(mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1
            mb8ic64ih128iw128oc64oh128ow128kh3kw3ph1pw1)
fi
source perf/compare_common.sh
compare_setup
# The first round's distconv runs add --verbose: the lines before the JSON
# say how rank 0 computes each pass.
for p in "${problems[@]}"; do
  declare -A t=()
  n_cfg=${#configs[@]}
  for ((r = 1; r <= rounds; r++)); do
    for j in $(round_order "$r" "$n_cfg"); do
      cfg=${configs[$j]}
      v=()
      [ "$r" -eq 1 ] && v=(--verbose)
      case $cfg in
        onednn1) out=$("${mpi[@]}" -np 1 -x OMP_NUM_THREADS=1 "$bench" "${flags[@]}" --mode=perf --json --impl=onednn "$p") ;;
        onednn2) out=$("${mpi[@]}" -np 1 -x OMP_NUM_THREADS=2 "$bench" "${flags[@]}" --mode=perf --json --impl=onednn "$p") ;;
        distconv1) out=$("${mpi[@]}" -np 1 -x OMP_NUM_THREADS=1 "$bench" "${flags[@]}" "${v[@]}" --mode=perf --json "$p") ;;
        distconv2) out=$("${mpi[@]}" -np 2 -x OMP_NUM_THREADS=1 "$bench" "${flags[@]}" "${v[@]}" --mode=perf --json "$p") ;;
        distconv1_measured) out=$("${mpi[@]}" -np 1 -x OMP_NUM_THREADS=1 "$bench" "${flags[@]}" "${v[@]}" --mode=perf --json --kernel-choice=measured "$p") ;;
        distconv2_measured) out=$("${mpi[@]}" -np 2 -x OMP_NUM_THREADS=1 "$bench" "${flags[@]}" "${v[@]}" --mode=perf --json --kernel-choice=measured "$p") ;;
        distconv2_off) out=$("${mpi[@]}" -np 2 -x OMP_NUM_THREADS=1 "$bench" "${flags[@]}" --mode=perf --json --overlap=off "$p") ;;
      esac
      echo "$out" | grep -v '^{' | sed "s/^/$cfg: /" || true
      line=$(echo "$out" | grep '^{' | tail -n 1)
      echo "$line"
      record "$cfg" "$r" "$line"
      t[${cfg}_wait]+="$(echo "$line" | field comm_wait_ms) "
    done
  done
  echo "== $p: medians over $rounds rounds (ms)"
  printf "oneDNN 1 thread %.1f | distconv 1 rank %.1f | ratio %.3f (paired %.3f)\n" \
    "$(m onednn1)" "$(m distconv1)" "$(ratio "$(m onednn1)" "$(m distconv1)")" \
    "$(paired onednn1 distconv1)"
  printf "oneDNN 2 threads %.1f | distconv 2 ranks %.1f (comm wait %.2f) | ratio %.3f (paired %.3f)\n" \
    "$(m onednn2)" "$(m distconv2)" "$(m distconv2_wait)" "$(ratio "$(m onednn2)" "$(m distconv2)")" \
    "$(paired onednn2 distconv2)"
  if [ "$measured" -eq 1 ]; then
    for n in 1 2; do
      printf "measured choice, %d rank(s): distconv %.1f | ratio to oneDNN %.3f (paired %.3f) | heuristic / measured %.3f (paired %.3f)\n" \
        "$n" "$(m distconv${n}_measured)" \
        "$(ratio "$(m onednn$n)" "$(m distconv${n}_measured)")" \
        "$(paired onednn$n distconv${n}_measured)" \
        "$(ratio "$(m distconv$n)" "$(m distconv${n}_measured)")" \
        "$(paired distconv$n distconv${n}_measured)"
    done
  fi
  if [ ${#flags[@]} -eq 0 ]; then
    printf "distconv 2 ranks overlap off %.1f (comm wait %.2f)\n" \
      "$(m distconv2_off)" "$(m distconv2_off_wait)"
  fi
  unset t
done
