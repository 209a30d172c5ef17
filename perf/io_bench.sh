#!/bin/bash
# Parallel I/O bandwidth against the disk's sequential bandwidth, side by
# side in one run: for each rank count, dd writes and reads a file of the
# tensor's size, then io_bench writes and reads the tensor as .npy and as
# HDF5. Writes are timed to disk (dd conv=fdatasync; io_bench fsyncs);
# before every read the page cache is dropped (as root; otherwise reads
# come from the page cache, for dd and io_bench alike, and it says so).
# The three take turns, REPEAT times (disk bandwidth on shared or virtual
# machines drifts by several times within minutes); the table has the
# medians.
#   perf/io_bench.sh [DIR [SHAPE [REPEAT [RANKS...]]]]
#     DIR: where the files go (default /tmp; it needs three times the
#     tensor); SHAPE: default 1x4x512x512x512 (float32, 2 GiB); REPEAT:
#     default 3; RANKS: default 1 2 4
# Prints a table: GiB/s of dd and of each format, and their ratio.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-/tmp}
shape=${2:-1x4x512x512x512}
repeat=${3:-3}
shift $(($# > 3 ? 3 : $#))
ranks=("$@")
((${#ranks[@]})) || ranks=(1 2 4)
bazel build -c opt //perf:io_bench > /dev/null 2>&1
bench=bazel-bin/perf/io_bench
export OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none

bytes=4
for e in ${shape//x/ }; do bytes=$((bytes * e)); done
mib=$((bytes / 1048576))
drop() {
  sync
  if ! { echo 3 > /proc/sys/vm/drop_caches; } 2> /dev/null; then
    [[ -n ${warned:-} ]] || echo "(cannot drop the page cache: reads come from it)" >&2
    warned=1
  fi
}
gibs() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.3f", b / s / 1073741824 }'; }
dd_seconds() {  # dd_seconds ARGS...: dd's own elapsed seconds
  dd "$@" 2>&1 | awk '/copied/ { for (i = 1; i <= NF; ++i) if ($i ~ /^s,?$/) print $(i - 1) }'
}
io_seconds() {  # io_seconds NUM_RANKS ARGS...
  local n=$1
  shift
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$bench" \
    --shape="$shape" "$@" | sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p'
}

echo "shape $shape float32 ($mib MiB) in $dir"
printf "%5s %6s %10s %10s %10s %10s %10s\n" ranks mode "dd GiB/s" "npy GiB/s" "npy/dd" "h5 GiB/s" "h5/dd"
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for n in "${ranks[@]}"; do
  raw="$dir/io_bench_dd.bin" npy="$dir/io_bench.npy" h5="$dir/io_bench.h5"
  dd_w="" npy_w="" h5_w="" dd_r="" npy_r="" h5_r=""
  for ((k = 0; k < repeat; ++k)); do
    rm -f "$raw" "$npy" "$h5"
    sync
    dd_w+=" $(dd_seconds if=/dev/zero of="$raw" bs=16M count=$((mib / 16)) conv=fdatasync)"
    npy_w+=" $(io_seconds "$n" --format=npy --mode=write --path="$npy")"
    h5_w+=" $(io_seconds "$n" --format=h5 --mode=write --path="$h5")"
    drop; dd_r+=" $(dd_seconds if="$raw" of=/dev/null bs=16M)"
    drop; npy_r+=" $(io_seconds "$n" --format=npy --mode=read --path="$npy")"
    drop; h5_r+=" $(io_seconds "$n" --format=h5 --mode=read --path="$h5")"
  done
  for mode in write read; do
    if [[ $mode == write ]]; then d=$dd_w a=$npy_w b=$h5_w; else d=$dd_r a=$npy_r b=$h5_r; fi
    d=$(median <<< "$d") a=$(median <<< "$a") b=$(median <<< "$b")
    printf "%5s %6s %10s %10s %10s %10s %10s\n" "$n" "$mode" "$(gibs "$d")" \
      "$(gibs "$a")" "$(awk -v x="$d" -v y="$a" 'BEGIN { printf "%.2f", x / y }')" \
      "$(gibs "$b")" "$(awk -v x="$d" -v y="$b" 'BEGIN { printf "%.2f", x / y }')"
  done
  rm -f "$raw" "$npy" "$h5"
done
