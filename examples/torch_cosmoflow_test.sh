#!/bin/bash
# perf/torch_cosmoflow.py is the C++ CosmoFlow example's network and data:
# its synthetic volumes and targets equal those the example writes with
# --write-data (to fp32 rounding), and it trains (finite losses, a JSON
# line perf/step_vs_torch.py reads); bad sizes are refused.
#   torch_cosmoflow_test.sh COSMOFLOW TORCH_COSMOFLOW
set -euo pipefail
example=$1 script=$2
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cosmoflow.XXXXXX")
source tests/mpi_env.sh
timeout 120 mpirun --allow-run-as-root -np 1 "$example" --size=16 \
  --samples=3 --write-data="$dir/data.h5" >/dev/null
/usr/bin/python3 - "$script" "$dir/data.h5" <<'PY'
import importlib.util
import sys

import h5py
import numpy
import torch

spec = importlib.util.spec_from_file_location("torch_cosmoflow", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
with h5py.File(sys.argv[2], "r") as f:
    x, t = numpy.array(f["x"]), numpy.array(f["targets"])
rx, rt = ref.data(3, 16)
assert x.shape == tuple(rx.shape), (x.shape, rx.shape)
assert t.shape == tuple(rt.shape), (t.shape, rt.shape)
dx = float((torch.from_numpy(x) - rx).abs().max())
dt = float((torch.from_numpy(t) - rt).abs().max())
assert dx < 1e-6 and dt < 1e-6, (dx, dt)
print("ok: the reference's data is the example's (max differences %.2g, "
      "%.2g)" % (dx, dt))
PY
out=$(timeout 300 /usr/bin/python3 "$script" --size=16 --samples=2 --steps=3)
echo "$out" | tail -2
grep -q '^{"ms_per_step": [0-9.e+-]*, "images_per_s"' <<<"$out"
if grep -qi "nan\|inf" <<<"$(grep '^step' <<<"$out")"; then
  echo "FAILED: a loss is not finite"; exit 1
fi
if /usr/bin/python3 "$script" --size=20 --stacks=3 2>/dev/null; then
  echo "FAILED: --size=20 with 3 stacks was accepted"; exit 1
fi
echo "ok: trains, and refuses a size that 2^stacks does not divide"
