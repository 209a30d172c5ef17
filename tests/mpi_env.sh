#!/bin/bash
# The environment of every MPI run in the tests: sourced by mpirun_test.sh
# and by the test scripts that launch mpirun themselves.
#   source tests/mpi_env.sh
#
# Single-node runs in a container or sandbox (all checked with Open MPI 4.1.4):
# - plm isolated: launch locally; the default rsh launcher aborts when no
#   ssh/rsh is installed, even for one node.
# - vader single copy off: CMA (process_vm_readv) fails without
#   CAP_SYS_PTRACE, e.g. in a default Docker container.
# - session directory in the test's own TEST_TMPDIR, so a killed run leaves
#   nothing in /tmp.
# - no pause between SIGTERM and SIGKILL when mpirun ends a job after a
#   rank exits non-zero: mpirun otherwise sleeps a second per such job
#   (no process here handles SIGTERM), and the tests that check error
#   exits launch dozens of them (1.4 s -> 0.4 s a launch).
export OMPI_MCA_plm=isolated
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_odls_base_sigkill_timeout=0
export OMPI_MCA_orte_tmpdir_base="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
# One oneDNN (OpenMP) thread per rank: ranks already oversubscribe the cores,
# and spinning OpenMP teams on top slow the tests tenfold.
export OMP_NUM_THREADS=1
# Every rank inherits the environment: gtest's XML report and Bazel's
# premature-exit file would be written and removed by all ranks at once.
# Bazel writes its own test.xml from the exit status instead.
unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE
# Under --config=asan: ignore Open MPI's own leaks (tests/lsan.supp is in
# data). The suppressions match library names anywhere in the allocation
# stack, but Open MPI is built without frame pointers, so ASan's default fast
# unwinder stops after one frame (often in an unloaded mca_* plugin) and
# nothing matches; the slow unwinder sees the whole stack. Options already in
# the environment come last and win.
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# asan_options_for RANKS: ASAN_OPTIONS for a run of RANKS ranks. The slow
# unwinder makes every allocation 3-8x dearer (the 3-rank convolution test:
# 50 s against 6.4 s), so leaks are looked for in 1-rank runs only (every
# layer allocates there what it allocates on more ranks); runs of more
# ranks look for memory errors, with the fast unwinder and no leak check.
#   ASAN_OPTIONS=$(asan_options_for "$n") mpirun -np "$n" ...
asan_options_for() {
  if (($1 > 1)); then
    echo "${ASAN_OPTIONS}:detect_leaks=0:fast_unwind_on_malloc=1"
  else
    echo "$ASAN_OPTIONS"
  fi
}

# lsan_tracer_crashed LOG: the run logged in LOG ended in LeakSanitizer's
# own fatal error (its tracer crashed in the leak check at exit) and in no
# report of a leak, a memory error or a failed test.
lsan_tracer_crashed() {
  grep -q "^Tracer caught signal" "$1" &&
    grep -q "LeakSanitizer has encountered a fatal error" "$1" &&
    ! grep -qE "ERROR: (LeakSanitizer: detected|AddressSanitizer)|runtime error:|\[  FAILED  \]|^distconv: [0-9]+ passed, [1-9]" "$1"
}
