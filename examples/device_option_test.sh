#!/bin/bash
# The examples' --device option: --device=gpu exits 2 with a message saying
# why where it cannot run (a build without the GPU backend, a machine
# without a GPU), or trains where it can; --device=gpu with
# --precision=bf16 and an unknown device exit 2 naming the problem.
#   device_option_test.sh SEGMENTATION COSMOFLOW
set -uo pipefail
source tests/mpi_env.sh
failed=0
run() {  # run BINARY ARGS...: sets out and rc
  local binary=$1
  shift
  out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np 2 "$binary" --steps=1 "$@" 2>&1)
  rc=$?
}
expect() {  # expect BINARY PATTERN ARGS...: exit 2 and PATTERN printed
  local binary=$1 pattern=$2
  shift 2
  run "$binary" "$@"
  if ((rc != 2)) || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAILED: $(basename "$binary") $* exited $rc without \"$pattern\":"
    echo "$out" | tail -5
    failed=1
  else
    echo "ok: $(basename "$binary") $* -> $(grep -m1 -- "$pattern" <<<"$out")"
  fi
}
for binary in "$1" "$2"; do
  run "$binary" --size=16 --device=gpu
  if ((rc == 0)) && grep -q "step   1" <<<"$out"; then
    echo "ok: $(basename "$binary") --device=gpu trained on a GPU"
  else
    expect "$binary" "built without the GPU backend\|no CUDA device" \
      --size=16 --device=gpu
  fi
  expect "$binary" "trains in fp32" --size=16 --device=gpu --precision=bf16
  expect "$binary" "the device is cpu or gpu" --size=16 --device=tpu
done
exit $failed
