#!/bin/bash
# Trains one example on several grids and checks that the loss curves agree:
# each run's loss at every step within a relative TOLERANCE of the first
# run's, and the loss lower after the last step than after the first.
#   loss_curve_test.sh BINARY TIMEOUT_S TOLERANCE "EXAMPLE ARGS" \
#       RANKS:GRID[:OPTION]...
# GRID is one grid for every layer (--grid=), a comma-separated list of
# one per unit (--grids=), or "auto" (--grid=auto, the planner's); OPTION,
# one more option for that run alone (--precision=bf16 against an fp32
# first run, say).
# Each run goes through tests/mpirun_test.sh (one thread per rank, a
# deadlock fails after TIMEOUT_S), or through MPIRUN_TEST, a launcher with
# the same arguments (tests/two_hosts_test.sh runs across two hosts). Runs
# from the runfiles root.
set -u
binary="$1" timeout_s="$2" tolerance="$3" example_args="$4"
shift 4
dir="${TEST_TMPDIR:-$(mktemp -d)}"
first=""
for run in "$@"; do
  ranks="${run%%:*}" grid="${run#*:}" extra=""
  if [[ "$grid" == *:* ]]; then
    extra="${grid#*:}" grid="${grid%%:*}"
  fi
  tag="${extra//[^A-Za-z0-9]/_}"
  out="$dir/losses_${ranks}_${grid//,/_}${tag}.txt"
  echo "== $ranks rank(s), grid $grid $extra"
  option="--grid=$grid"
  [[ "$grid" == *,* ]] && option="--grids=$grid"
  # shellcheck disable=SC2086  # example_args is a list of options
  if ! "${MPIRUN_TEST:-tests/mpirun_test.sh}" "$ranks" "$binary" "$timeout_s" \
      $example_args $extra \
      "$option" --losses="$out"; then
    echo "FAIL: the run on grid $grid failed" >&2
    exit 1
  fi
  if [[ -z "$first" ]]; then
    first="$out"
    if ! awk 'NR == 1 { l1 = $2 } END { if (NR < 2 || !($2 < l1)) exit 1 }' "$out"; then
      echo "FAIL: the loss did not fall on grid $grid:" >&2
      cat "$out" >&2
      exit 1
    fi
    continue
  fi
  if ! paste "$first" "$out" | awk -v tol="$tolerance" -v grid="$grid" '
      { d = $4 - $2; if (d < 0) d = -d; s = $2 < 0 ? -$2 : $2
        if ($1 != $3 || d > tol * s) {
          printf "step %s: loss %s on the first grid, %s on %s\n", $1, $2, $4, grid
          bad = 1 } }
      END { exit bad }' >&2; then
    echo "FAIL: the loss curve on grid $grid differs (tolerance $tolerance)" >&2
    exit 1
  fi
  if [[ $(wc -l < "$out") != $(wc -l < "$first") ]]; then
    echo "FAIL: grid $grid logged another number of steps" >&2
    exit 1
  fi
done
echo "PASS: the loss curves of $# grids agree within $tolerance"
