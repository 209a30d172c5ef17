#!/bin/bash
# Writes into a read-only file system (a tmpfs remounted read-only: the
# root user is refused too), on 1 to 3 ranks: a checkpoint, --write-data
# and the benchmark's --dump-dir in each format. Each ends with the same
# "Read-only file system" error on every rank within seconds, and the
# files there stay byte for byte as they were.
#   read_only_test.sh SEGMENTATION BENCH
set -uo pipefail
source tests/faults/fault_lib.sh
segmentation=$1 bench=$2
disk=$fault_work/disk
small_disk "$disk" 4096 || finish

run_job 2 60 "$segmentation" --size=32 --steps=2 \
  --checkpoint-dir="$disk/ckpt" --checkpoint-every=2
expect_status 0
run_job 2 60 "$segmentation" --size=16 --write-data="$disk/data.h5" \
  --data-samples=4
expect_status 0
problem=mb2ic3ih16iw16oc4kh3kw3ph1pw1
for format in h5 npy; do
  mkdir -p "$disk/dump_$format"
  run_job 2 60 "$bench" --dump-dir="$disk/dump_$format" \
    --dump-format="$format" "$problem"
  expect_status 0
done
snapshot "$disk" > "$fault_work/before"
if ! mount -o remount,ro "$disk" 2> "$fault_work/why"; then
  echo "SKIPPED: cannot remount $disk read-only ($(cat "$fault_work/why")): the read-only cases did not run"
  finish
fi

refused() {  # refused STATUS RANKS COMMAND...
  local status=$1 np=$2
  shift 2
  run_job "$np" 60 "$@"
  expect_status "$status"
  expect_message_on_every_rank "Read-only file system"
  expect_within 15
  expect_unchanged "$disk" "$fault_work/before"
}
case_start "a checkpoint"
refused 2 2 "$segmentation" --size=32 --steps=4 --checkpoint-dir="$disk/ckpt" \
  --checkpoint-every=2 --resume
case_start "--write-data over a data set"
refused 2 3 "$segmentation" --size=16 --write-data="$disk/data.h5" \
  --data-samples=4
case_start "--write-data, a new file"
refused 2 1 "$segmentation" --size=16 --write-data="$disk/new.h5"
for format in h5 npy; do
  case_start "--dump-dir, $format"
  refused 1 2 "$bench" --dump-dir="$disk/dump_$format" \
    --dump-format="$format" "$problem"
done
finish
