#!/bin/bash
# A rank killed (SIGKILL) while the ranks write a file over an earlier
# one (--write-data, the benchmark's HDF5 dump), and a rank stopped
# (SIGSTOP) past the job's time limit (--timeout_s) while training with
# checkpoints. Each time the job ends non-zero within seconds, mpirun
# names the rank and signal, and every file that was complete before is
# byte for byte as it was (a killed write leaves at most its PATH.tmp).
#   killed_rank_test.sh SEGMENTATION BENCH
set -uo pipefail
source tests/faults/fault_lib.sh
segmentation=$1 bench=$2

# start_job RANKS LIMIT_S COMMAND...: run_job in the background; job_pid
# is timeout's.
start_job() {
  job_ranks=$1
  local limit=$2
  shift 2
  job_log=$(mktemp "$fault_work/job.XXXXXX")
  job_start=$(date +%s%N)
  timeout --kill-after=5 "$limit" mpirun --allow-run-as-root --oversubscribe \
    --bind-to none --mca mpi_yield_when_idle 1 --tag-output -np "$job_ranks" \
    "$@" > "$job_log" 2>&1 &
  job_pid=$!
}
end_job() {
  wait "$job_pid"
  job_status=$?
  job_seconds=$(awk -v ms="$(( ($(date +%s%N) - job_start) / 1000000 ))" \
    'BEGIN { printf "%.1f", ms / 1000 }')
  echo "  ran on $job_ranks ranks: exit $job_status after $job_seconds s"
}
# rank_pids: the job's rank processes, by rank (OMPI_COMM_WORLD_RANK).
rank_pids() {
  local p all=() queue=("$job_pid")
  while ((${#queue[@]})); do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    for c in $(pgrep -P "$p"); do all+=("$c"); queue+=("$c"); done
  done
  pids=()
  for p in "${all[@]}"; do
    local r
    r=$(tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null |
      sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [[ -n $r ]] && pids[$r]=$p
  done
}
# wait_for TEST: polls TEST (a shell condition) for up to 30 s.
wait_for() {
  local i
  for ((i = 0; i < 30000; ++i)); do
    eval "$1" && return 0
    sleep 0.001
  done
  return 1
}

# kill_during NAME FILE COMMAND...: two ranks write FILE over an earlier
# one; rank 1 is killed once FILE.tmp exists (the write has begun).
kill_during() {
  local name=$1 file=$2
  shift 2
  local try
  for try in 1 2 3 4 5; do
    case_start "$name: rank 1 killed while $(basename "$file") is written (try $try)"
    snapshot "$(dirname "$file")" > "$fault_work/before"
    start_job 2 60 "$@"
    wait_for 'rank_pids; ((${#pids[@]} == 2))' || fail "no ranks seen"
    if ! wait_for "[[ -e $file.tmp ]] || ! kill -0 $job_pid 2> /dev/null"; then
      fail "the write did not start"
    fi
    local caught=0
    if kill -STOP "${pids[@]}" 2> /dev/null; then
      [[ -e $file.tmp ]] && caught=1
      kill -KILL "${pids[1]}"
      kill -CONT "${pids[0]}" 2> /dev/null
    fi
    end_job
    ((caught)) || { echo "  (the write ended before the kill)"; continue; }
    ((job_status != 0)) || fail "the job exited 0"
    grep -q "rank 1 .*signal 9\|signal 9 (Killed)" "$job_log" ||
      { fail "mpirun did not name the killed rank"; show_log; }
    expect_within 20
    rm -f "$file.tmp"  # a killed write's leftover, never read
    expect_unchanged "$(dirname "$file")" "$fault_work/before"
    return
  done
  fail "$name: no kill landed during the write in 5 tries"
}

mkdir -p "$fault_work/data" "$fault_work/dump"
write_data=("$segmentation" --size=64 --data-samples=32
            --write-data="$fault_work/data/d.h5")
run_job 2 60 "${write_data[@]}"
expect_status 0
kill_during --write-data "$fault_work/data/d.h5" "${write_data[@]}"
dump=("$bench" --dump-dir="$fault_work/dump" --dump-format=h5
      mb8ic16ih96iw96oc16kh3kw3ph1pw1)
run_job 2 60 "${dump[@]}"
expect_status 0
kill_during --dump-dir "$fault_work/dump/tensors.h5" "${dump[@]}"

case_start "rank 1 stopped past the time limit (--timeout_s=6) while training"
ckpt=$fault_work/ckpt
start_job 2 60 "$segmentation" --size=32 --steps=1000000 --timeout_s=6 \
  --checkpoint-dir="$ckpt" --checkpoint-every=20
wait_for "[[ -e $ckpt/step-00000040.h5 ]]" || fail "no checkpoint came"
rank_pids
kill -STOP "${pids[1]}"
# What was complete when the rank stopped.
(cd "$ckpt" && md5sum step-*.h5) > "$fault_work/complete"
end_job
((job_status != 0)) || fail "the job exited 0"
grep -q "signal 14 (Alarm clock)" "$job_log" ||
  { fail "mpirun did not name the time limit's signal"; show_log; }
expect_within 15
(cd "$ckpt" && md5sum -c --quiet "$fault_work/complete") ||
  fail "a complete checkpoint changed"
finish
