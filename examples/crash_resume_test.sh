#!/bin/bash
# A rank killed (SIGKILL) in the middle of training, and separately in the
# middle of writing a checkpoint: the job ends non-zero within its time
# limit, and --resume continues from the last good checkpoint with the
# loss curve of an uninterrupted run, bitwise on the same grid and within
# fp32 rounding on another.
#   crash_resume_test.sh EXAMPLE 'ARGS' GRID OTHER_GRID
# (ARGS: the example's problem; 2 ranks on GRID, the resume on another
# grid on 3 ranks, OTHER_GRID)
set -uo pipefail
example=$(realpath "$1")
read -r -a problem <<< "$2"
grid=$3 other=$4
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/crash.XXXXXX")
source tests/mpi_env.sh
cd "$work"
args=("${problem[@]}" --steps=60 --data=data.h5 --grid="$grid")
run() {  # run NUM_RANKS ARGS...: the example under mpirun, 120 s at most
  local n=$1
  shift
  ASAN_OPTIONS=$(asan_options_for "$n") \
    timeout --kill-after=10 120 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np "$n" "$example" "$@"
}
fail() { echo "crash_resume_test: FAILED: $*" >&2; exit 1; }

run 2 "${args[@]}" --write-data=data.h5 --data-samples=6 > /dev/null ||
  fail "writing the data set"
run 2 "${args[@]}" --losses=full.txt > /dev/null || fail "uninterrupted run"

# crash DIR EVERY WHEN: a run checkpointing into DIR every EVERY steps,
# one rank killed once WHEN (a test on DIR) holds.
crash() {
  local dir=$1 every=$2 when=$3
  local start=$SECONDS
  run 2 "${args[@]}" --checkpoint-dir="$dir" --checkpoint-every="$every" \
    > "$dir.log" 2>&1 &
  local launcher=$!
  # The ranks' pids first (processes named like the example), so that
  # nothing slow stands between seeing WHEN hold and stopping them.
  local pids=() p
  for ((i = 0; i < 3000 && ${#pids[@]} < 2; ++i)); do
    pids=()
    for p in $(pgrep -f -- "--checkpoint-dir=$dir"); do
      [[ $(ps -o comm= -p "$p") == "$(basename "$example" | cut -c1-15)" ]] &&
        pids+=("$p")
    done
    ((${#pids[@]} >= 2)) || sleep 0.01
  done
  ((${#pids[@]} >= 2)) || fail "$dir: found ${#pids[@]} ranks to kill"
  for ((i = 0; i < 2000000; ++i)); do eval "$when" && break; done
  # Freeze every rank, kill one, let the others go on.
  kill -STOP "${pids[@]}"
  ls "$dir" > "$dir.at_kill"
  kill -KILL "${pids[1]}"
  kill -CONT "${pids[@]}" 2> /dev/null
  wait "$launcher"
  local status=$?
  ((status != 0)) || fail "$dir: the job exited 0 after a rank was killed"
  # mpirun exits 137 itself (the killed rank's status); timeout's limit
  # is 120 s.
  ((SECONDS - start < 100)) || fail "$dir: the job hung after a rank was killed"
  echo "$dir: a rank killed with $(tr '\n' ' ' < "$dir.at_kill")in the directory; the job exited $status after $((SECONDS - start)) s"
}

mkdir -p mid
# In the middle of training: once step 6's checkpoint is in place.
crash mid 3 '[[ -e mid/step-00000006.h5 ]]'
# In the middle of writing a checkpoint, after two were written: while a
# .tmp file exists.
# The file can be renamed between seeing it and stopping the ranks: up to
# five tries.
for try in 1 2 3 4 5; do
  rm -rf write && mkdir write
  crash write 1 '[[ -e write/step-00000002.h5 ]] && compgen -G "write/*.tmp" > /dev/null'
  grep -q '\.tmp' write.at_kill && break
done
grep -q '\.tmp' write.at_kill || fail "the kill did not land during a checkpoint write"

# resume DIR RANKS GRID OUT: --resume, and the losses of the steps it ran.
resume() {
  run "$2" "${args[@]/--grid=$grid/--grid=$3}" --checkpoint-dir="$1" \
    --checkpoint-every=100 --resume --losses="$4" > "$4.log" 2>&1 ||
    fail "resuming from $1"
  grep "^resume:" "$4.log"
}
compare() {  # compare FILE TOLERANCE: FILE's steps against full.txt
  awk -v tol="$2" 'NR == FNR { want[$1] = $2; next }
    { n++; d = $2 - want[$1]; if (d < 0) d = -d; r = d / (want[$1] < 0 ? -want[$1] : want[$1]);
      if (!($1 in want) || (tol == 0 ? $2 != want[$1] : r > tol)) { print "step " $1 ": " $2 " vs " want[$1]; bad = 1 } }
    END { if (n == 0) { print "no steps"; bad = 1 }; exit bad }' full.txt "$1" ||
    fail "$1 differs from the uninterrupted run"
  local how="bitwise"
  [[ $2 == 0 ]] || how="to a relative $2"
  echo "$1: steps $(head -1 "$1" | cut -d' ' -f1)-$(tail -1 "$1" | cut -d' ' -f1) equal the uninterrupted run's ($how)"
}
resume mid 2 "$grid" mid_same.txt && compare mid_same.txt 0
resume write 2 "$grid" write_same.txt && compare write_same.txt 0
# Another grid and rank count, from the mid-training checkpoints: fp32
# sums in another order, whose rounding grows over the 50 steps left
# (2e-5 seen).
resume mid 3 "$other" mid_other.txt && compare mid_other.txt 1e-4
echo "crash_resume_test: ok"
