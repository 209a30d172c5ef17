#!/bin/bash
# tests/gpu/device_check.sh with a stand-in runner (--runner) on a pack of
# nothing but a manifest, and a stand-in nvidia-smi: the stages' order,
# verdicts with and without a GPU listed, the budget (CUT, NOT RUN,
# nothing launched once it is spent), a test past its own time limit,
# --rerun-failed, an archive, bad arguments.
set -uo pipefail
check=${1:-tests/gpu/device_check.sh}
check=$(realpath "$check")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/device_check.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
expect() {  # expect DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fails=$((fails + 1)); fi
}

mkdir -p "$work/pack/bin" "$work/gpu" "$work/nogpu"
for t in cudnn_conv_test box_segments_test box_pack_test pool_window_test \
    cuda_pool_test cuda_batch_norm_test device_space_test \
    device_halo_exchange_test device_convolution_test \
    device_deconvolution_test device_pooling_test device_batch_norm_test \
    device_redistribute_test device_activation_test device_add_test \
    device_concat_test device_upsample_test device_copy_shard_test \
    device_softmax_test device_loss_test; do
  echo "$t $([[ $t == cuda_pool_test ]] && echo 1 || echo 30)"
done >"$work/pack/manifest.txt"
tar -C "$work" -czf "$work/pack.tar.gz" pack
printf '#!/bin/bash\n[[ $1 == -L ]] && echo "GPU 0: NVIDIA H200 (UUID: GPU-0)"\nexit 0\n' \
  >"$work/gpu/nvidia-smi"
printf '#!/bin/bash\nexit 9\n' >"$work/nogpu/nvidia-smi"
chmod +x "$work/gpu/nvidia-smi" "$work/nogpu/nvidia-smi"

# The stand-in: logs each call, then acts as STANDIN says.
cat >"$work/runner" <<'RUNNER'
#!/bin/bash
echo "$1 $2" >>"$CALLS"
case $STANDIN in
  pass) echo "distconv: 3 passed, 0 failed" ;;
  nodev) echo "GPU test not run: no CUDA device"
         echo "no CUDA device"
         echo "distconv: 0 passed, 0 failed, 3 skipped" ;;
  slow) [[ $1 == device_probe ]] || sleep 3
        echo "distconv: 3 passed, 0 failed" ;;
  faults) [[ $1 == device_convolution_test && $2 == 2 ]] && { echo broken; exit 1; }
          [[ $1 == cuda_pool_test ]] && sleep 30
          echo "distconv: 3 passed, 0 failed" ;;
esac
exit 0
RUNNER
chmod +x "$work/runner"

run() {  # run NAME GPU|NOGPU MODE ARGS...: device_check.sh; its exit code
  local name=$1 smi=$2 mode=$3
  shift 3
  : >"$work/$name.calls"
  PATH="$work/$smi:$PATH" STANDIN=$mode CALLS="$work/$name.calls" \
    bash "$check" --runner="$work/runner" --out="$work/$name" "$@" \
    >"$work/$name.out" 2>&1
}
at() { grep -n -- "$2" "$work/$1/summary.txt" | head -1 | cut -d: -f1; }
count() { grep -c -- "$2" "$work/$1/summary.txt"; }
calls() { grep -vc '^device_probe' "$work/$1.calls"; }

# All pass, from the archive, no GPU listed: the stages in order.
run all nogpu pass "$work/pack.tar.gz" --budget=600
rc=$?
expect "all pass: exit 0" test $rc -eq 0
expect "all pass: unpacked" test -f "$work/all/pack/manifest.txt"
expect "all pass: machine first" test "$(head -1 "$work/all/summary.txt" | cut -c1-4)" = INFO
expect "all pass: the cuDNN tests first" test "$(sed -n 2p "$work/all/summary.txt" | awk '{print $2, $3}')" = "cudnn_conv_test ranks=1"
expect "all pass: 1 rank before 2" test "$(at all 'device_convolution_test ranks=1')" -lt "$(at all 'device_convolution_test ranks=2')"
expect "all pass: layers at 2 before figures" test "$(at all 'distconv_bench_check0 ranks=2')" -lt "$(at all 'gpu_conv_bench ranks=1')"
expect "all pass: figures before 3 and 4 ranks" test "$(at all 'gpu_pack_bench ranks=1')" -lt "$(at all 'device_convolution_test ranks=3')"
expect "all pass: examples last" test "$(at all 'device_loss_test ranks=4')" -lt "$(at all 'segmentation_gpu_f32 ranks=4')"
expect "all pass: NCCL not covered" test "$(tail -1 "$work/all/summary.txt" | cut -c1-11)" = "NOT COVERED"
expect "all pass: every launch passed" test "$(count all '^PASS ')" -eq "$(calls all)"

# GPU cases skipping while nvidia-smi lists a GPU: FAIL.
run listed gpu nodev "$work/pack" --budget=600
rc=$?
expect "skips with a GPU listed: exit 1" test $rc -eq 1
expect "skips with a GPU listed: tests FAIL" grep -q '^FAIL .*cudnn_conv_test ranks=1 .*nvidia-smi lists a GPU' "$work/listed/summary.txt"
expect "skips with a GPU listed: probe FAIL" grep -q '^FAIL .*device_probe' "$work/listed/summary.txt"
# The same without a GPU: SKIP, nothing fails, the layer checks not launched.
run none nogpu nodev "$work/pack" --budget=600
rc=$?
expect "no GPU: exit 0" test $rc -eq 0
expect "no GPU: no FAIL" test "$(count none '^FAIL')" -eq 0
expect "no GPU: tests SKIP" grep -q '^SKIP .*device_convolution_test ranks=2 .*no CUDA device' "$work/none/summary.txt"
expect "no GPU: checks not launched" grep -q '^SKIP .*distconv_bench_check0 ranks=1 .*not launched' "$work/none/summary.txt"
expect "no GPU: no check launched" test "$(grep -c distconv_bench "$work/none.calls")" -eq 0

# The budget: 3 s per item in 8 s (the machine stage's time counts too):
# the items that fit pass, at most one is cut, the rest are not run, and
# nothing is launched once the budget is spent.
t0=$SECONDS
run budget nogpu slow "$work/pack" --budget=8
rc=$?
took=$((SECONDS - t0))
passed=$(count budget '^PASS ') cut=$(count budget '^CUT ')
expect "budget: exit 0" test $rc -eq 0
expect "budget: some passed" test "$passed" -ge 1
expect "budget: at most one cut" test "$cut" -le 1
expect "budget: launched only what passed or was cut" test "$(calls budget)" -eq $((passed + cut))
expect "budget: the rest NOT RUN" test "$(count budget '^NOT RUN ')" -ge 100
expect "budget: ended within the budget" test "$took" -le 14
expect "budget: summary says so" grep -q 'device check: .*NOT RUN [0-9]' "$work/budget.out"
# A stand-in slower than what is left: CUT, not FAIL.
run cut nogpu slow "$work/pack" --budget=1
expect "budget of 1 s: the first item cut" test "$(count cut '^CUT ')" -eq 1 -a "$(count cut '^PASS ')" -eq 0 -o "$(calls cut)" -eq 0

# A failure and a test past its own limit (1 s), then only those rerun.
run faults nogpu faults "$work/pack" --budget=600
rc=$?
expect "faults: exit 1" test $rc -eq 1
expect "faults: the failing test" grep -q '^FAIL .*device_convolution_test ranks=2 .*exit 1' "$work/faults/summary.txt"
expect "faults: past its limit" grep -q '^FAIL .*cuda_pool_test ranks=1 .*past its limit of 1 s' "$work/faults/summary.txt"
expect "faults: its log kept" test -s "$work/faults/logs/device_convolution_test_np2.log"
run rerun nogpu pass "$work/pack" --budget=600 --rerun-failed="$work/faults/summary.txt"
rc=$?
expect "rerun: exit 0" test $rc -eq 0
expect "rerun: only the two failures" test "$(grep -v '^device_probe' "$work/rerun.calls" | sort | tr '\n' ' ')" = "cuda_pool_test 1 device_convolution_test 2 "

# Bad arguments: exit 2, nothing run.
for bad in "--budget=0" "--budget=x" "--budget=60 --bogus" ""; do
  # shellcheck disable=SC2086
  bash "$check" "$work/pack" --out="$work/bad" $bad >/dev/null 2>&1
  expect "bad arguments '$bad': exit 2" test $? -eq 2
done
bash "$check" "$work/nothing" --out="$work/bad" --budget=60 >/dev/null 2>&1
expect "no pack: exit 2" test $? -eq 2

if ((fails)); then
  echo "device_check_test: $fails failed"
  for f in "$work"/*.out; do echo "== $f"; tail -30 "$f"; done
  exit 1
fi
echo "device_check_test: all passed"
