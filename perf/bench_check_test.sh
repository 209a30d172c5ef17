#!/bin/bash
# distconv_bench in correctness mode, every driver and algorithm, on 1 and
# 3 ranks: split along H (10 rows over 3 ranks: uneven) and along samples
# (2 samples over 3 ranks: one rank empty); fp32 and fp64. Each run checks
# the gathered results against the reference kernels and exits non-zero
# on FAIL or ERROR; --transport on two of them. Each driver's bare oneDNN
# baseline (--impl=onednn) once. Then --device=gpu: in a
# build without the GPU backend (or on a machine without a GPU) a clear
# error naming why, on every problem, not a crash.
#   bench_check_test.sh BENCH
set -uo pipefail
bench=$1
source tests/mpi_env.sh
failed=0
run() {  # run NP ARGS...: one distconv_bench run
  local np=$1
  shift
  local out
  out=$(ASAN_OPTIONS=$(asan_options_for "$np") timeout 300 mpirun \
    --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
    "$bench" "$@" 2>&1)
  local rc=$?
  echo "$out"
  if ((rc != 0)); then
    echo "FAILED (exit $rc): -np $np $*"
    failed=1
  fi
}

image=mb2ic3ih10iw7
drivers=(
  "--conv ${image}oc4kh3kw3ph1pw1 ${image}oc6kh3kw2sh2ph1g3"
  "--deconv mb2ic4ih5iw4oc3kh4kw3sh2ph1pw1"
  "--pool --alg=max ${image}kh3kw3sh2ph1pw1"
  "--pool --alg=avg_np ${image}kh3kw3ph1pw1"
  "--pool --alg=avg_p ${image}kh2kw2sh2"
  "--bnorm $image"
  "--gnorm g2mb2ic4ih10iw7"
  "--eltwise --alg=relu $image"
  "--eltwise --alg=leaky_relu $image"
  "--eltwise --alg=add $image"
  "--eltwise --alg=concat $image"
  "--eltwise --alg=nearest $image"
)
for d in "${drivers[@]}"; do
  read -ra args <<<"$d"
  run 1 "${args[@]}"
  run 3 --dt=f64 "${args[@]}"
  run 3 --grid=3x1x1x1 "${args[@]}"
done
# --impl=onednn: each driver's bare oneDNN baseline runs (perf mode, one
# timed run, every pass), every driver but --gnorm (no oneDNN baseline).
for d in "${drivers[@]}"; do
  [[ $d == --gnorm* ]] && continue
  read -ra args <<<"$d"
  run 1 --impl=onednn --mode=perf --warmup=0 --reps=1 "${args[@]}"
done
# --transport: the layers with halos over another host transport.
run 3 --transport=packed_buffers --conv "${image}oc4kh3kw3ph1pw1"
run 3 --transport=mpi_datatypes --pool --alg=max "${image}kh3kw3sh2ph1pw1"

# --device=gpu: every problem reports the same clear error (exit 1).
out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none \
  -np 2 "$bench" --device=gpu --pool "${image}kh3kw3ph1pw1" 2>&1)
rc=$?
echo "$out"
if grep -q "built without the GPU backend\|no CUDA device" <<<"$out"; then
  ((rc == 1)) || { echo "FAILED: --device=gpu without a GPU exits $rc"; failed=1; }
elif ! grep -q " PASS " <<<"$out"; then
  echo "FAILED: --device=gpu said neither why it cannot run nor PASS"
  failed=1
fi
exit $failed
