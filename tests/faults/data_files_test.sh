#!/bin/bash
# --data files that are not what the example reads: more channels, a
# larger image, labels of two channels, another element type, the storage
# order NHWC (a square image, so only its "distconv_order" tells). Each is
# refused on every rank before any step (the reader once cut the first
# three down to what the network takes, and trained on NHWC data as NCHW);
# a larger data set is read when --data-window names the window, and a
# file without the attribute (another tool's) is read as NCHW.
#   data_files_test.sh SEGMENTATION SCRIPT
set -uo pipefail
source tests/faults/fault_lib.sh
segmentation=$1 script=$2
data=$fault_work/data
mkdir -p "$data"
run_job 2 60 "$segmentation" --size=16 --write-data="$data/good.h5" \
  --data-samples=4
expect_status 0
run_job 2 60 "$segmentation" --size=16 --channels=16 \
  --write-data="$data/square.h5" --data-samples=4
expect_status 0
/usr/bin/python3 "$script" "$data/good.h5" "$data/square.h5" "$data" ||
  fail "making the data sets"
snapshot "$data" > "$fault_work/made"

refused() {  # refused FILE MESSAGE [OPTIONS...]
  local file=$1 message=$2
  shift 2
  case_start "--data=$file $*"
  run_job 2 60 "$segmentation" --size=16 --steps=2 --data="$data/$file" "$@"
  expect_status 2
  expect_message_on_every_rank "$message"
  expect_no_message "step   1"
  expect_within 15
}
refused more_channels.h5 "dataset 'x' of $data/more_channels.h5 has shape 4x19x16x16: a batch of 2x18x16x16"
refused larger_image.h5 "has shape 4x18x20x20: a batch of 2x18x16x16"
refused two_channel_labels.h5 "dataset 'labels' of $data/two_channel_labels.h5 has shape 4x2x16x16: a batch of 2x1x16x16"
refused float64.h5 "holds float64, not float32"
refused nhwc.h5 "is stored NHWC (its distconv_order), not NCHW" --channels=16
refused larger_image.h5 "does not hold a 2x18x16x16 window at" \
  --data-window=0x5x5
refused two_channel_labels.h5 "holds labels of 2 channels, not 1" \
  --data-window=0x0x0
expect_unchanged "$data" "$fault_work/made"

accepted() {  # accepted FILE [OPTIONS...]
  case_start "--data=$1 ${*:2}"
  run_job 2 60 "$segmentation" --size=16 --steps=2 --data="$data/$1" "${@:2}"
  expect_status 0
  grep -q "step   2" "$job_log" || fail "no step 2"
}
accepted larger_image.h5 --data-window=0x2x2
accepted more_channels.h5 --data-window=1x0x0
accepted no_order.h5 --channels=16
finish
