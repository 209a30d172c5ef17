#!/bin/bash
# The training examples refuse options that cannot work together, on every
# rank (the same message, exit 2, at once), and write nothing: a checkpoint
# interval without a directory, --resume without one, an unknown option.
#   bad_options_test.sh SEGMENTATION COSMOFLOW
set -uo pipefail
source tests/faults/fault_lib.sh
segmentation=$1 cosmoflow=$2

dir=$fault_work/ckpt
mkdir -p "$dir"
run_job 1 60 "$segmentation" --size=16 --steps=2 --checkpoint-dir="$dir" \
  --checkpoint-every=1
expect_status 0
snapshot "$dir" > "$fault_work/before"

for np in 1 3; do
  case_start "--checkpoint-every without --checkpoint-dir, $np ranks"
  run_job "$np" 60 "$segmentation" --size=16 --steps=2 --checkpoint-every=1
  expect_status 2
  expect_message_on_every_rank "--checkpoint-every=1 needs --checkpoint-dir"
  expect_within 10

  case_start "--resume without --checkpoint-dir, $np ranks"
  run_job "$np" 60 "$cosmoflow" --size=8 --steps=2 --resume
  expect_status 2
  expect_message_on_every_rank "--resume needs --checkpoint-dir"
  expect_within 10

  case_start "an unknown option, $np ranks"
  run_job "$np" 60 "$segmentation" --checkpoint-dir="$dir" --resume --bogus
  expect_status 2
  expect_message_on_every_rank "unknown option --bogus"
  expect_within 10
  expect_unchanged "$dir" "$fault_work/before"
done
finish
