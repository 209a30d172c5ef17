#!/bin/bash
# The CosmoFlow example reads a data set in the public files' layout (a
# directory of one-sample HDF5 files, channels last, int16 counts; written
# by cosmoflow_data.py): its loss curve equals, bitwise, the curve of the
# same samples read from one file in distconv's own layout, on 2 ranks
# (split along D) and on 3 (uneven shards along H). A directory with no
# data files, and files without the datasets, fail with a clear message.
#   cosmoflow_files_test.sh COSMOFLOW COSMOFLOW_DATA_PY
set -uo pipefail
example=$(realpath "$1")
generator=$(realpath "$2")
python=/usr/bin/python3  # Debian's, with python3-numpy and python3-h5py
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cosmoflow_files.XXXXXX")
source tests/mpi_env.sh
cd "$work"
fail() { echo "cosmoflow_files_test: FAILED: $*" >&2; exit 1; }
run() {  # run NUM_RANKS ARGS...: the example under mpirun, 120 s at most
  local n=$1
  shift
  ASAN_OPTIONS=$(asan_options_for "$n") \
    timeout --kill-after=10 120 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np "$n" "$example" --size=16 --samples=2 --stacks=2 \
    --width=4 --hidden=8 --lr=0.002 --steps=6 "$@"
}

"$python" "$generator" files --samples=6 --size=16 --distconv-file=one.h5 ||
  fail "writing the data set"
for case in "2 1x1x2x1x1" "3 1x1x1x3x1"; do
  read -r n grid <<< "$case"
  run "$n" --grid="$grid" --data=files --losses="files_$n.txt" > "files_$n.log" 2>&1 ||
    { cat "files_$n.log"; fail "--data=files on $n ranks"; }
  run "$n" --grid="$grid" --data=one.h5 --losses="one_$n.txt" > "one_$n.log" 2>&1 ||
    { cat "one_$n.log"; fail "--data=one.h5 on $n ranks"; }
  [[ $(wc -l < "files_$n.txt") == 6 ]] || fail "$n ranks: $(wc -l < "files_$n.txt") loss lines"
  cmp "files_$n.txt" "one_$n.txt" ||
    { paste "files_$n.txt" "one_$n.txt"; fail "$n ranks: the curves differ"; }
  echo "$n ranks ($grid): $(tail -1 "files_$n.txt") from both layouts"
done

mkdir empty
run 2 --data=empty > empty.log 2>&1 && fail "an empty directory was accepted"
grep -q "holds no .hdf5 or .h5 files" empty.log || { cat empty.log; fail "empty directory message"; }
mkdir bad
"$python" -c "import h5py; [h5py.File('bad/%s.hdf5' % n, 'w').create_dataset('other', data=[1]) for n in 'ab']"
run 2 --data=bad > bad.log 2>&1 && fail "a file without \"full\" was accepted"
grep -q "has no dataset 'full'" bad.log || { cat bad.log; fail "missing dataset message"; }
echo "cosmoflow_files_test: passed"
