#!/bin/bash
# Runs one MPI GoogleTest binary under mpirun: the test script of every
# sh_test made by mpi_cc_test (tests/mpi_test.bzl). Runs from the runfiles root.
#   usage: mpirun_test.sh NUM_RANKS BINARY TIMEOUT_S [test args...]
# The binary's own --timeout_s alarm fails a deadlocked rank fast; coreutils
# `timeout` (TIMEOUT_S + 30) also catches a hang in MPI_Init or in mpirun.
set -u
ranks="$1" binary="$2" timeout_s="$3"
shift 3

source tests/mpi_env.sh  # (the test runs from the runfiles root)

ASAN_OPTIONS=$(asan_options_for "$ranks") \
  timeout --kill-after=10 "$((timeout_s + 30))" \
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
  --mca mpi_yield_when_idle 1 \
  "$binary" --timeout_s="$timeout_s" "$@"
status=$?
[[ $status == 124 ]] && echo "mpirun_test.sh: mpirun killed after $((timeout_s + 30)) s" >&2
exit "$status"
