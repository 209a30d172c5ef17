#!/bin/bash
# The convolution layer in bf16 side by side with fp32 and with bare oneDNN
# bf16 primitives on the same global problem (forward + backward-data +
# backward-weights), in one run, rounds interleaved so that machine noise
# hits every configuration, each round starting one configuration later
# than the one before and every other round in reverse order:
#   distconv fp32 and bf16 on 1 rank x 1 thread, and on 2 ranks (H split);
#   bf16 both with the heuristic's kernels (oneDNN's own bf16 kernels on
#   AMX tiles and on AMD's AVX512-BF16, fp32 kernels on fp32 copies
#   elsewhere) and with --kernel-choice=measured (oneDNN's own bf16
#   kernels where they time faster on this CPU)
#   oneDNN bf16 on 1 and 2 threads (where oneDNN has bf16 kernels for this
#   CPU; otherwise its error, naming the type, is printed)
# Prints each run's JSON line, then medians over the rounds and the ratios
# (fp32 time / bf16 time: bf16's speed-up; oneDNN bf16 time / distconv bf16
# time: 1.0 is oneDNN's speed), each speed-up also as the median of the
# rounds' own ratios ("paired").
# Prints the CPU model and its vector extensions first, and for each
# problem how distconv computes each pass on rank 0 (the kernels oneDNN
# chose, from the first round's runs with --verbose).
#   perf/compare_precision.sh [ROUNDS] [PROBLEM...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds="${1:-3}"
shift || true
problems=("$@")
if [ ${#problems[@]} -eq 0 ]; then
  problems=(mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1
            mb8ic64ih128iw128oc64oh128ow128kh3kw3ph1pw1)
fi
source perf/compare_common.sh
compare_setup
configs=(f32_1 bf16_1 bf16m_1 f32_2 bf16_2 bf16m_2 onednn_1 onednn_2)
# The first round's distconv runs add --verbose: the lines before the JSON
# say how rank 0 computes each pass.
for p in "${problems[@]}"; do
  declare -A t=()
  onednn_error=""
  n_cfg=${#configs[@]}
  for ((r = 1; r <= rounds; r++)); do
    for j in $(round_order "$r" "$n_cfg"); do
      cfg=${configs[$j]}
      n="${cfg##*_}"
      v=()
      [ "$r" -eq 1 ] && v=(--verbose)
      case $cfg in
        f32_*) args=(-np "$n" -x OMP_NUM_THREADS=1 "$bench" --dt=f32 "${v[@]}") ;;
        bf16_*) args=(-np "$n" -x OMP_NUM_THREADS=1 "$bench" --dt=bf16 "${v[@]}") ;;
        bf16m_*) args=(-np "$n" -x OMP_NUM_THREADS=1 "$bench" --dt=bf16
                       --kernel-choice=measured "${v[@]}") ;;
        onednn_*) args=(-np 1 -x "OMP_NUM_THREADS=$n" "$bench" --dt=bf16
                        --impl=onednn) ;;
      esac
      # A configuration oneDNN cannot run exits 1 with its error in JSON.
      out=$("${mpi[@]}" "${args[@]}" --mode=perf --json "$p" 2>/dev/null) ||
        true
      echo "$out" | grep -v '^{' | sed "s/^/$cfg: /" || true
      line=$(echo "$out" | grep '^{' | tail -n 1)
      echo "$line"
      if [ "$(echo "$line" | field status)" != "OK" ]; then
        onednn_error="$(echo "$line" | field error)"
        continue
      fi
      record "$cfg" "$r" "$line"
    done
  done
  echo "== $p: medians over $rounds rounds (ms)"
  for n in 1 2; do
    printf "%s rank(s): fp32 %.1f | bf16 %.1f | bf16 speed-up %.3f (paired %.3f) | bf16 measured %.1f | its speed-up %.3f (paired %.3f)\n" "$n" \
      "$(m f32_$n)" "$(m bf16_$n)" "$(ratio "$(m f32_$n)" "$(m bf16_$n)")" \
      "$(paired f32_$n bf16_$n)" \
      "$(m bf16m_$n)" "$(ratio "$(m f32_$n)" "$(m bf16m_$n)")" \
      "$(paired f32_$n bf16m_$n)"
    if [ -n "${t[onednn_$n]:-}" ]; then
      printf "  oneDNN bf16 %s thread(s) %.1f | ratio to distconv bf16 %.3f\n" \
        "$n" "$(m onednn_$n)" "$(ratio "$(m onednn_$n)" "$(m bf16_$n)")"
    else
      echo "  oneDNN bf16 $n thread(s): not run: $onednn_error"
    fi
  done
  unset t
done
