#!/bin/bash
# Resuming the training examples from checkpoints that are not theirs or
# not whole: another number of classes, width or image size, the other
# example's directory, a run with --data where the checkpoints were made
# without; a run started over in a directory of newer checkpoints; damaged
# (cut short, altered) and renamed checkpoints. A checkpoint of another
# network is an error on every rank naming what differs, and nothing in
# the directory is written, removed or renamed; damaged ones are skipped,
# or, when none loads, the run stops rather than start over on them.
#   resume_test.sh SEGMENTATION COSMOFLOW
set -uo pipefail
source tests/faults/fault_lib.sh
segmentation=$1 cosmoflow=$2
dir=$fault_work/ckpt
seg=(--size=32 --steps=4 --checkpoint-dir="$dir" --checkpoint-every=2)

case_start "the checkpoints: steps 2 and 4 of segmentation on 2 ranks"
run_job 2 60 "$segmentation" "${seg[@]}"
expect_status 0
snapshot "$dir" > "$fault_work/made"
[[ $(ls "$dir") == $'step-00000002.h5\nstep-00000004.h5' ]] ||
  fail "the checkpoints are $(ls "$dir")"

resume_refused() {  # resume_refused RANKS MESSAGE COMMAND...
  local np=$1 message=$2
  shift 2
  run_job "$np" 60 "$@" --checkpoint-dir="$dir" --resume
  expect_status 2
  expect_message_on_every_rank "$message"
  expect_no_message "step   5"
  expect_within 15
  expect_unchanged "$dir" "$fault_work/made"
}
case_start "another number of classes"
resume_refused 2 "entry 'param2.value': float32 array of 48 there, float32 array of 64 here" \
  "$segmentation" --size=32 --steps=8 --classes=4 --checkpoint-every=2
case_start "another width, on 3 ranks"
resume_refused 3 "belongs to another network: written for 'segmentation: 2 x 18 x 32 x 32 input, width 16, 3 classes, padding zeros', this run is 'segmentation: 2 x 18 x 32 x 32 input, width 8" \
  "$segmentation" --size=32 --steps=8 --width=8
case_start "another image size, on 1 rank"
resume_refused 1 "this run is 'segmentation: 2 x 18 x 64 x 64 input" \
  "$segmentation" --size=64 --steps=8
case_start "the other example's directory"
resume_refused 2 "belongs to another network: written for 'segmentation" \
  "$cosmoflow" --size=8 --stacks=2 --steps=8
case_start "--data where the checkpoints were made without"
run_job 2 60 "$segmentation" --size=32 --write-data="$fault_work/data.h5" \
  --data-samples=4
expect_status 0
resume_refused 2 "entry 'data.position': int64 here, not in the checkpoint" \
  "$segmentation" --size=32 --steps=8 --data="$fault_work/data.h5"

case_start "a run started over (no --resume) where newer checkpoints are"
run_job 2 60 "$segmentation" --size=32 --steps=3 --checkpoint-dir="$dir" \
  --checkpoint-every=1
expect_status 2
expect_message_on_every_rank "already holds step-00000004.h5 of this network, after step 1"
expect_within 15
expect_unchanged "$dir" "$fault_work/made"

case_start "checkpoints altered: none loads, nothing is written"
cp -a "$dir" "$fault_work/altered"
# (step 2 in its header's padding, step 4 in its data)
printf 'x' | dd of="$fault_work/altered/step-00000002.h5" bs=1 seek=3000 \
  conv=notrunc status=none
printf 'x' | dd of="$fault_work/altered/step-00000004.h5" bs=1 seek=60000 \
  conv=notrunc status=none
snapshot "$fault_work/altered" > "$fault_work/altered.snap"
run_job 2 60 "$segmentation" --size=32 --steps=8 \
  --checkpoint-dir="$fault_work/altered" --checkpoint-every=2 --resume
expect_status 2
expect_message_on_every_rank "none of the 2 checkpoints in $fault_work/altered loads"
expect_within 15
expect_unchanged "$fault_work/altered" "$fault_work/altered.snap"

case_start "the newest cut short, another renamed: both skipped"
cp -a "$dir" "$fault_work/cut"
truncate -s 5000 "$fault_work/cut/step-00000004.h5"
cp "$dir/step-00000002.h5" "$fault_work/cut/step-00000003.h5"
run_job 2 60 "$segmentation" --size=32 --steps=4 \
  --checkpoint-dir="$fault_work/cut" --checkpoint-every=2 --resume
expect_status 0
grep -q "resume: skipped .*step-00000004.h5" "$job_log" ||
  fail "no word of the cut checkpoint"
grep -q "resume: skipped .*step-00000003.h5 holds step 2, not step 3" \
  "$job_log" || fail "no word of the renamed checkpoint"
grep -q "resume: from .*step-00000002.h5 (step 2)" "$job_log" ||
  fail "did not resume from step 2"
expect_within 20
cmp -s "$dir/step-00000002.h5" "$fault_work/cut/step-00000002.h5" ||
  fail "step 2 changed"
cmp -s "$dir/step-00000002.h5" "$fault_work/cut/step-00000003.h5" ||
  fail "the renamed checkpoint changed"
finish
