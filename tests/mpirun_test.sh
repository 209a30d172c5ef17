#!/bin/bash
# Runs one MPI GoogleTest binary under mpirun: the test script of every
# sh_test made by mpi_cc_test (tests/mpi_test.bzl). Runs from the runfiles root.
#   usage: mpirun_test.sh NUM_RANKS BINARY TIMEOUT_S [test args...]
# The binary's own --timeout_s alarm fails a deadlocked rank fast; coreutils
# `timeout` (TIMEOUT_S + 30) also catches a hang in MPI_Init or in mpirun.
# Where LeakSanitizer's own tracer crashes in the leak check at exit (a
# fatal error of the sanitizer, not a leak report, with no test failed:
# seen now and then under load), the job runs again without the leak
# check, saying so; the second run's status is the test's.
set -u
ranks="$1" binary="$2" timeout_s="$3"
shift 3

source tests/mpi_env.sh  # (the test runs from the runfiles root)

log=$(mktemp "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/mpirun_test.XXXXXX")
trap 'rm -f "$log"' EXIT
# run ASAN_OPTIONS [test args...]: the job, its output copied into $log.
run() {
  local options=$1
  shift
  ASAN_OPTIONS=$options \
    timeout --kill-after=10 "$((timeout_s + 30))" \
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
    --mca mpi_yield_when_idle 1 \
    "$binary" --timeout_s="$timeout_s" "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

options=$(asan_options_for "$ranks")
run "$options" "$@"
status=$?
if ((status != 0)) && lsan_tracer_crashed "$log"; then
  echo "mpirun_test.sh: LeakSanitizer's tracer crashed at exit (not a leak" \
    "report, no test failed); running again without the leak check" >&2
  run "${options:+$options:}detect_leaks=0" "$@"
  status=$?
fi
[[ $status == 124 ]] && echo "mpirun_test.sh: mpirun killed after $((timeout_s + 30)) s" >&2
exit "$status"
