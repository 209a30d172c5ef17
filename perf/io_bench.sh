#!/bin/bash
# Parallel I/O bandwidth against the disk's sequential bandwidth, side by
# side in one run: for each rank count, dd writes and reads a file of the
# tensor's size twice, through the page cache and direct (O_DIRECT, the
# disk without the cache), then io_bench writes and reads the tensor as
# .npy and as HDF5 (its default: streamed through the page cache,
# io/page_cache.h; PAGE_CACHE=keep leaves the pages cached instead).
# Writes are timed to disk (dd conv=fdatasync; io_bench syncs). Every timed
# write and read starts from the same state: the page cache dropped (as
# root; otherwise reads come from the page cache, and it says so), then
# SETTLE seconds of quiet (default 5). The pause matters on virtual
# machines that hand freed guest memory back to the host: filling
# page-cache pages freed a moment ago runs several times faster than
# filling pages freed seconds ago, so without it whichever writer runs
# first after a delete wins.
# The four take turns, REPEAT times (disk bandwidth on shared or virtual
# machines drifts by several times within minutes); the table has the
# medians, and each format's ratio to the faster dd.
#   [SETTLE=s] [PAGE_CACHE=stream|keep] perf/io_bench.sh [DIR [SHAPE [REPEAT [RANKS...]]]]
#     DIR: where the files go (default /tmp; it needs three times the
#     tensor); SHAPE: default 1x4x512x512x512 (float32, 2 GiB); REPEAT:
#     default 3; RANKS: default 1 2 4
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-/tmp}
shape=${2:-1x4x512x512x512}
repeat=${3:-3}
shift $(($# > 3 ? 3 : $#))
ranks=("$@")
((${#ranks[@]})) || ranks=(1 2 4)
settle=${SETTLE:-5}
cache=${PAGE_CACHE:-stream}
bazel build -c opt //perf:io_bench > /dev/null 2>&1
bench=bazel-bin/perf/io_bench
export OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none

bytes=4
for e in ${shape//x/ }; do bytes=$((bytes * e)); done
mib=$((bytes / 1048576))
drop() {  # the same starting state for every timed write and read
  sync
  if ! { echo 3 > /proc/sys/vm/drop_caches; } 2> /dev/null; then
    [[ -n ${warned:-} ]] || echo "(cannot drop the page cache: reads come from it)" >&2
    warned=1
  fi
  sleep "$settle"
}
gibs() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.3f", b / s / 1073741824 }'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.2f", x / y }'; }
dd_seconds() {  # dd_seconds ARGS...: dd's own elapsed seconds
  dd "$@" 2>&1 | awk '/copied/ { for (i = 1; i <= NF; ++i) if ($i ~ /^s,?$/) print $(i - 1) }'
}
io_seconds() {  # io_seconds NUM_RANKS ARGS...
  local n=$1
  shift
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$bench" \
    --shape="$shape" --page-cache="$cache" "$@" | sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p'
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
min() { awk -v x="$1" -v y="$2" 'BEGIN { print (x < y ? x : y) }'; }

echo "shape $shape float32 ($mib MiB) in $dir; io_bench --page-cache=$cache; ${settle} s settle"
printf "%5s %6s %9s %9s %9s %7s %9s %7s\n" ranks mode "dd GiB/s" "direct" "npy" "npy/dd" "h5" "h5/dd"
for n in "${ranks[@]}"; do
  raw="$dir/io_bench_dd.bin" npy="$dir/io_bench.npy" h5="$dir/io_bench.h5"
  declare -A t=()
  for ((k = 0; k < repeat; ++k)); do
    rm -f "$raw" "$npy" "$h5"
    drop; t[dd_write]+=" $(dd_seconds if=/dev/zero of="$raw" bs=16M count=$((mib / 16)) conv=fdatasync)"
    drop; t[direct_write]+=" $(dd_seconds if=/dev/zero of="$raw" bs=16M count=$((mib / 16)) oflag=direct conv=fdatasync)"
    drop; t[npy_write]+=" $(io_seconds "$n" --format=npy --mode=write --path="$npy")"
    drop; t[h5_write]+=" $(io_seconds "$n" --format=h5 --mode=write --path="$h5")"
    drop; t[dd_read]+=" $(dd_seconds if="$raw" of=/dev/null bs=16M)"
    drop; t[direct_read]+=" $(dd_seconds if="$raw" of=/dev/null bs=16M iflag=direct)"
    drop; t[npy_read]+=" $(io_seconds "$n" --format=npy --mode=read --path="$npy")"
    drop; t[h5_read]+=" $(io_seconds "$n" --format=h5 --mode=read --path="$h5")"
  done
  for mode in write read; do
    d=$(median <<< "${t[dd_$mode]}") o=$(median <<< "${t[direct_$mode]}")
    a=$(median <<< "${t[npy_$mode]}") b=$(median <<< "${t[h5_$mode]}")
    best=$(min "$d" "$o")
    printf "%5s %6s %9s %9s %9s %7s %9s %7s\n" "$n" "$mode" "$(gibs "$d")" "$(gibs "$o")" \
      "$(gibs "$a")" "$(ratio "$best" "$a")" "$(gibs "$b")" "$(ratio "$best" "$b")"
  done
  unset t
  rm -f "$raw" "$npy" "$h5"
done
