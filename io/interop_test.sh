#!/bin/bash
# distconv's files read by NumPy and h5py, and theirs by distconv: 3 ranks
# write, one Python process checks and writes, 3 ranks read back.
#   interop_test.sh TOOL SCRIPT
set -euo pipefail
tool=$1 script=$2
python=/usr/bin/python3  # Debian's, with python3-numpy and python3-h5py
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/interop.XXXXXX")
tests/mpirun_test.sh 3 "$tool" 60 write "$dir"
"$python" "$script" check "$dir"
"$python" "$script" write "$dir"
tests/mpirun_test.sh 3 "$tool" 60 read "$dir"
