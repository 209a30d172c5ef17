#!/bin/bash
# Runs a fuzz target's corpus replay (tests/fuzz.bzl: BINARY CORPUS) in the
# environment of the MPI tests (tests/mpi_env.sh): the targets that read
# files through MPI-IO run Open MPI in one process, and under the
# sanitizers LeakSanitizer must know Open MPI's own allocations
# (tests/lsan.supp).
#   fuzz_replay.sh BINARY CORPUS
set -u
source tests/mpi_env.sh
exec "$@"
