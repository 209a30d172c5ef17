#!/bin/bash
# What the fault-injection tests (tests/faults/*_test.sh) share: a job run
# under mpirun with each output line tagged with its rank, and the checks
# every fault case makes: the exit status, the same error message on every
# rank, the time taken, and that earlier files are byte for byte intact.
#   source tests/faults/fault_lib.sh
#   run_job 2 60 bazel-bin/examples/segmentation --steps=4 ...
#   expect_status 2; expect_message_on_every_rank "needs --checkpoint-dir"
#   expect_within 20
#   snapshot "$dir" > before; ...; expect_unchanged "$dir" before
# A case that needs what this machine cannot give (mounting a file system)
# says so on a line starting "SKIPPED:" (tests/run.sh lists them) and
# does not count as passed.
source tests/mpi_env.sh

fault_failures=0
fault_work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/faults.XXXXXX")
trap 'fault_cleanup' EXIT
fault_mounts=()
fault_cleanup() {
  local m
  for m in "${fault_mounts[@]}"; do umount -l "$m" 2>/dev/null; done
  rm -rf "$fault_work"
}

fail() {
  echo "FAILED: $*"
  fault_failures=$((fault_failures + 1))
}

# case_start NAME: a heading for the log.
case_start() { echo "=== $*"; }

# run_job RANKS LIMIT_S COMMAND...: runs COMMAND on RANKS ranks, killed
# after LIMIT_S seconds; sets job_status, job_seconds, job_ranks and
# job_log (every line prefixed by [1,RANK]<stdout>: or <stderr>:).
run_job() {
  job_ranks=$1
  local limit=$2
  shift 2
  job_log=$(mktemp "$fault_work/job.XXXXXX")
  local start end
  start=$(date +%s%N)
  timeout --kill-after=5 "$limit" mpirun --allow-run-as-root --oversubscribe \
    --bind-to none --mca mpi_yield_when_idle 1 --tag-output -np "$job_ranks" \
    "$@" > "$job_log" 2>&1
  job_status=$?
  end=$(date +%s%N)
  job_seconds=$(( (end - start) / 1000000 ))  # milliseconds
  job_seconds=$(awk -v ms="$job_seconds" 'BEGIN { printf "%.1f", ms / 1000 }')
  echo "  ran on $job_ranks ranks: exit $job_status after $job_seconds s: $*"
}

# job_lines RANK STREAM: the job's lines from one rank's stdout or stderr,
# without the tag.
job_lines() {
  grep -F "[1,$1]<$2>:" "$job_log" | sed "s/^\[1,$1\]<$2>://"
}

show_log() { sed 's/^/  | /' "$job_log" | tail -n 30; }

expect_status() {
  if [[ $job_status != "$1" ]]; then
    fail "exit status $job_status, wanted $1"
    show_log
  fi
}

# expect_message_on_every_rank TEXT: every rank printed a line holding
# TEXT (an error, or rank 0's report of one), and the same distconv
# error in it (from "distconv: " on).
expect_message_on_every_rank() {
  local text=$1 r first="" line
  for ((r = 0; r < job_ranks; ++r)); do
    line=$({ job_lines "$r" stderr; job_lines "$r" stdout; } |
      grep -F -- "$text" | head -n 1)
    if [[ -z $line ]]; then
      fail "rank $r printed no line holding \"$text\""
      show_log
      return
    fi
    [[ $line == *"distconv: "* ]] && line="distconv: ${line#*distconv: }"
    if [[ -z $first ]]; then
      first=$line
      echo "  every rank: ${line:0:300}"
    elif [[ $line != "$first" ]]; then
      fail "rank $r's message differs from rank 0's: $line"
    fi
  done
}

# expect_no_message TEXT: no rank printed TEXT.
expect_no_message() {
  if grep -qF -- "$1" "$job_log"; then
    fail "the job printed \"$1\""
    show_log
  fi
}

expect_within() {
  if awk -v t="$job_seconds" -v max="$1" 'BEGIN { exit !(t > max) }'; then
    fail "took $job_seconds s, more than $1 s"
  fi
}

# snapshot DIR: each file's checksum and size, sorted (for expect_unchanged).
snapshot() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r md5sum)
}

# expect_unchanged DIR SNAPSHOT_FILE: the same files, byte for byte, and
# no others.
expect_unchanged() {
  local now
  now=$(snapshot "$1")
  if [[ $now != "$(cat "$2")" ]]; then
    fail "the files in $1 changed:"
    diff <(cat "$2") <(echo "$now") | sed 's/^/  | /'
  fi
}

# small_disk DIR KB: mounts a tmpfs of KB KiB at DIR (made if needed);
# returns 1 (after a SKIPPED: line naming why) where this machine cannot
# mount one. Unmounted at the end of the test.
small_disk() {
  mkdir -p "$1"
  local why
  if why=$(mount -t tmpfs -o "size=${2}k" tmpfs "$1" 2>&1); then
    fault_mounts+=("$1")
    return 0
  fi
  echo "SKIPPED: cannot mount a tmpfs here ($why): the cases on a small disk did not run"
  return 1
}

# fill DIR KB_LEFT: fills DIR's file system until KB_LEFT KiB are free.
fill() {
  local free
  rm -f "$1/filler"
  free=$(df --output=avail -k "$1" | tail -n 1)
  if ((free > $2)); then
    head -c "$(( (free - $2) * 1024 ))" /dev/zero > "$1/filler"
  fi
}

# finish: the test's exit status.
finish() {
  if ((fault_failures)); then
    echo "$fault_failures check(s) FAILED"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
