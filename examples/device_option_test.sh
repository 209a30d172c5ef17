#!/bin/bash
# The examples' --device option where no GPU can run them: --device=gpu in
# a build without the GPU backend (or on a machine without a GPU) exits 2
# with a message saying which; --device=gpu with --precision=bf16 and an
# unknown device are refused the same way.
#   device_option_test.sh SEGMENTATION
set -uo pipefail
binary=$1
source tests/mpi_env.sh
failed=0
expect() {  # expect PATTERN ARGS...: exit 2 and PATTERN in the output
  local pattern=$1
  shift
  local out rc
  out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np 2 "$binary" --size=16 --steps=1 "$@" 2>&1)
  rc=$?
  if ((rc == 0)) || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAILED: $* exited $rc without \"$pattern\":"
    echo "$out" | tail -5
    failed=1
  else
    echo "ok: $* -> $(grep -m1 -- "$pattern" <<<"$out")"
  fi
}
expect "built without the GPU backend\|no CUDA device" --device=gpu
expect "trains in fp32" --device=gpu --precision=bf16
expect "the device is cpu or gpu" --device=tpu
exit $failed
