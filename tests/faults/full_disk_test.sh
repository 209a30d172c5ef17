#!/bin/bash
# Writes on a disk that fills: a small tmpfs filled to leave from nothing
# to enough free, on 1 to 4 ranks, for the training examples' checkpoints
# and --write-data and the benchmark's --dump-dir (HDF5 and .npy), each
# over earlier files. Every run either succeeds or ends with the same "No
# space left on device" error on every rank, within seconds (no rank left
# in a collective, no crash at MPI_Finalize), the earlier files byte for
# byte intact and no partial file beside them.
#   full_disk_test.sh SEGMENTATION BENCH
set -uo pipefail
source tests/faults/fault_lib.sh
segmentation=$1 bench=$2
disk=$fault_work/disk
small_disk "$disk" 2048 || finish

# level NAME RANKS FREE_KIB DIR COMMAND...: COMMAND on RANKS ranks with
# FREE_KIB KiB free; DIR's files are compared with their snapshot.
# Counts the outcomes in ok_NAME and full_NAME.
declare -A outcomes
level() {
  local name=$1 np=$2 free=$3 dir=$4
  shift 4
  case_start "$name on $np ranks, $free KiB free"
  snapshot "$dir" > "$fault_work/before"
  fill "$disk" "$free"
  run_job "$np" 60 "$@"
  rm -f "$disk/filler"
  if ((job_status == 0)); then
    outcomes[$name]+=" ok"
  else
    outcomes[$name]+=" full"
    expect_message_on_every_rank "No space left on device"
    expect_unchanged "$dir" "$fault_work/before"
  fi
  expect_within 20
  if compgen -G "$dir/*.tmp" > /dev/null; then
    fail "a partial file is left: $(ls "$dir")"
  fi
}

# Checkpoints: step 2 in place, then steps 3-4 resumed with a checkpoint
# at step 4 (228 KB each; a save holds about twice that until it closes).
ckpt=$disk/ckpt
run_job 2 60 "$segmentation" --size=32 --steps=2 --checkpoint-dir="$ckpt" \
  --checkpoint-every=2
expect_status 0
cp "$ckpt/step-00000002.h5" "$fault_work/step2"
np=1
for free in 0 24 120 300 420 1200; do
  level checkpoints "$np" "$free" "$ckpt" "$segmentation" --size=32 --steps=4 \
    --checkpoint-dir="$ckpt" --checkpoint-every=2 --resume
  cmp -s "$ckpt/step-00000002.h5" "$fault_work/step2" || fail "step 2 changed"
  rm -f "$ckpt/step-00000004.h5"
  np=$((np % 4 + 1))
done

# --write-data over an earlier data set (82 KB).
data=$disk/data
mkdir -p "$data"
run_job 2 60 "$segmentation" --size=16 --write-data="$data/d.h5" \
  --data-samples=4
expect_status 0
for free in 0 40 100 400; do
  level write-data "$np" "$free" "$data" "$segmentation" --size=16 \
    --write-data="$data/d.h5" --data-samples=4
  np=$((np % 4 + 1))
done

# The benchmark's tensors over an earlier dump, in each format.
problem=mb2ic3ih16iw16oc4kh3kw3ph1pw1
for format in h5 npy; do
  dump=$disk/dump_$format
  mkdir -p "$dump"
  run_job 2 60 "$bench" --dump-dir="$dump" --dump-format="$format" "$problem"
  expect_status 0
  for free in 0 12 48 400; do
    level "dump-$format" "$np" "$free" "$dump" "$bench" --dump-dir="$dump" \
      --dump-format="$format" "$problem"
    np=$((np % 4 + 1))
  done
done

for name in "${!outcomes[@]}"; do
  echo "$name:${outcomes[$name]}"
  [[ ${outcomes[$name]} == *ok* && ${outcomes[$name]} == *full* ]] ||
    fail "$name: the levels did not give both outcomes"
done
finish
