#!/bin/bash
# distconv_bench in correctness mode, every driver and algorithm, on 1 and
# 3 ranks: split along H (10 rows over 3 ranks: uneven) and along samples
# (2 samples over 3 ranks: one rank empty); fp32 and fp64. Each run checks
# the gathered results against the reference kernels and exits non-zero
# on FAIL or ERROR; bf16 (and fp16 for --interp) once each; --transport
# on two of them, --input=in_place on the
# layers with halos, --kernel-choice=measured and --kernel-cache on the
# convolutions. Each driver's bare oneDNN
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
  "--interp $image"
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
# timed run, every pass), every driver but --gnorm and --interp (no oneDNN
# baseline).
for d in "${drivers[@]}"; do
  [[ $d == --gnorm* || $d == --interp* ]] && continue
  read -ra args <<<"$d"
  run 1 --impl=onednn --mode=perf --warmup=0 --reps=1 "${args[@]}"
done
# --input=in_place: the layers with halos reading in place, frames for the
# halos, on uneven H and on one empty rank.
for d in "${drivers[@]:0:6}"; do
  read -ra args <<<"$d"
  run 3 --input=in_place "${args[@]}"
  run 3 --input=in_place --grid=3x1x1x1 --dt=f64 "${args[@]}"
done
# The 16-bit paths of the host layers: bf16 in every driver on uneven H,
# and fp16 in linear interpolation (the one driver timing fp16 layers)
# with buffers and in place.
for d in "${drivers[@]}"; do
  read -ra args <<<"$d"
  run 3 --dt=bf16 "${args[@]}"
done
run 3 --dt=f16 --interp $image
run 3 --dt=f16 --input=in_place --interp $image
# --kernel-choice=measured: the convolutions' and max pooling's
# implementations timed and agreed, with buffers and in place; a
# --kernel-cache written by one run is taken whole by the next (one file
# for both kinds); a damaged one is refused with a message and the run
# times afresh and passes.
cache=$(mktemp -d)/kernels.cache
for d in "${drivers[@]:0:3}"; do
  read -ra args <<<"$d"
  run 3 --kernel-choice=measured "${args[@]}"
  run 3 --kernel-choice=measured --input=in_place --kernel-cache="$cache" \
    "${args[@]}"
done
# The convolutions and pooling, each from the cache alone.
for d in "${drivers[0]}" "${drivers[2]}"; do
  read -ra args <<<"$d"
  out=$(run 3 --kernel-choice=measured --input=in_place \
    --kernel-cache="$cache" "${args[@]}")
  echo "$out"
  grep -q "^FAILED" <<<"$out" && failed=1
  grep -q "choices taken" <<<"$out" ||
    { echo "FAILED: the kernel cache was not taken ($d)"; failed=1; }
  grep -q "rank 0: [1-9][0-9]* kernels from the cache, 0 timed" <<<"$out" ||
    { echo "FAILED: a run with a full kernel cache timed kernels ($d)"; failed=1; }
done
sed -i 's/channels_last/channels_lust/' "$cache"
out=$(run 3 --kernel-choice=measured --kernel-cache="$cache" ${drivers[0]})
echo "$out"
grep -q "^FAILED" <<<"$out" && failed=1
grep -q "kernel cache not used (.*corrupt" <<<"$out" ||
  { echo "FAILED: a corrupt kernel cache was not refused"; failed=1; }
rm -rf "$(dirname "$cache")"
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
