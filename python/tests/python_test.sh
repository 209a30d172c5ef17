#!/bin/bash
# Runs one Python test file of the PyTorch front end under mpirun with
# Debian's /usr/bin/python3 (PyTorch 1.13, mpi4py), the package and its
# extension module taken from the runfiles. Runs from the runfiles root.
#   usage: python_test.sh NUM_RANKS TEST_FILE TIMEOUT_S
# The test's own faulthandler alarm (harness.py) dumps the stacks and fails
# a deadlocked rank after TIMEOUT_S; `timeout` catches a hang in mpirun.
set -u
ranks="$1" file="$2" timeout_s="$3"

source tests/mpi_env.sh
export PYTHONPATH="$PWD/python:$PWD/python/tests:$PWD/examples"
export DISTCONV_TEST_TIMEOUT_S="$timeout_s"

timeout --kill-after=10 "$((timeout_s + 30))" \
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
  --mca mpi_yield_when_idle 1 \
  /usr/bin/python3 -W ignore::UserWarning "$file"
status=$?
[[ $status == 124 ]] && echo "python_test.sh: mpirun killed after $((timeout_s + 30)) s" >&2
exit "$status"
