#!/bin/bash
# distconv_bench --dump-dir in both formats, on 3 ranks with the input split
# along H (uneven): the files agree and y is NumPy's convolution of x.
#   dump_test.sh BENCH SCRIPT
set -euo pipefail
bench=$1 script=$2
problem=mb2ic3ih10iw7oc4oh10ow7kh3kw3ph1pw1
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dump.XXXXXX")
mkdir -p "$dir/npy" "$dir/h5"
source tests/mpi_env.sh
for format in npy h5; do
  ASAN_OPTIONS=$(asan_options_for 3) \
    timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 \
    "$bench" --conv --mode=correctness --grid=1x1x3x1 \
    --dump-dir="$dir/$format" --dump-format=$format $problem
done
/usr/bin/python3 "$script" "$dir/npy" "$dir/h5" 2 3 10 7 4 3 1
