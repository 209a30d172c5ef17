#!/bin/bash
# The examples' --device option: --device=gpu (fp32 and bf16) exits 2 with
# a message saying why where it cannot run (a build without the GPU
# backend, a machine without a GPU), or trains where it can; an unknown
# device exits 2 naming the problem, as does a grid splitting channels (the
# examples keep parameters whole).
#   device_option_test.sh SEGMENTATION COSMOFLOW
set -uo pipefail
source tests/mpi_env.sh
failed=0
run() {  # run RANKS BINARY ARGS...: sets out and rc
  local ranks=$1 binary=$2
  shift 2
  out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np "$ranks" "$binary" --steps=1 "$@" 2>&1)
  rc=$?
}
said() {  # said WHAT PATTERN: the last run exited 2 and printed PATTERN
  if ((rc != 2)) || ! grep -q -- "$2" <<<"$out"; then
    echo "FAILED: $1 exited $rc without \"$2\":"
    echo "$out" | tail -5
    failed=1
  else
    echo "ok: $1 -> $(grep -m1 -- "$2" <<<"$out")"
  fi
}
expect() {  # expect RANKS BINARY PATTERN ARGS...: exit 2, PATTERN printed
  local ranks=$1 binary=$2 pattern=$3
  shift 3
  run "$ranks" "$binary" "$@"
  said "$(basename "$binary") $*" "$pattern"
}
# The options are parsed alike on every rank: one rank checks the refusals.
for binary in "$1" "$2"; do
  for precision in f32 bf16; do
    run 2 "$binary" --size=16 --device=gpu --precision=$precision
    if ((rc == 0)) && grep -q "step   1" <<<"$out"; then
      echo "ok: $(basename "$binary") --device=gpu $precision trained on a GPU"
    else
      said "$(basename "$binary") --device=gpu --precision=$precision" \
        "built without the GPU backend\|no CUDA device"
    fi
  done
  expect 1 "$binary" "the device is cpu or gpu" --size=16 --device=tpu
done
expect 2 "$1" "splits channels" --size=16 --grid=1x2x1x1
expect 2 "$2" "splits channels" --size=16 --stacks=2 \
  --grids=1x1x2x1x1,1x2x1x1x1,2x1x1x1x1
exit $failed
