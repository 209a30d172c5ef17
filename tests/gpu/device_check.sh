#!/bin/bash
# The GPU device check: runs the pack tests/gpu/collect.sh made, in order
# of value, inside a time budget, on a machine with a GPU and no Bazel, MPI
# or network (and anywhere else: without a GPU every GPU case says SKIP).
#   tests/gpu/device_check.sh PACK.tar.gz|PACK_DIR --budget=SECONDS --out=DIR
#       [--rerun-failed=SUMMARY] [--runner=PROGRAM]
# The stages, in order, so that what the budget cuts is the least
# informative part:
#   1. machine: GPU model, driver, CUDA, cuDNN and NCCL versions, compute
#      and MIG modes (DIR/machine.txt);
#   2. every GPU test at 1 rank, the cuDNN kernel tests first;
#   3. the layers at 2 ranks sharing the GPU: the tests, then
#      distconv_bench --device=gpu against the host layer (halo exchange
#      host-staged and CUDA IPC, channel splits, every driver and type);
#   4. figures: the layer against direct cuDNN (gpu_conv_bench, and
#      distconv_bench --impl=cudnn, both with cuDNN's timed algorithm
#      search), against PyTorch's conv2d (torch_conv_bench.py), the halo
#      pack kernels against a device-to-device copy (gpu_pack_bench);
#   5. 3 and 4 ranks; the training examples' loss curves on the GPU against
#      the host's.
# Each item prints one line, "VERDICT name ranks=R seconds=S [note]", also
# in DIR/summary.txt; its log is DIR/logs/NAME_npR.log. Verdicts: PASS;
# FAIL (a failure, a test past its own time limit, or a GPU case that
# skipped for want of a device while nvidia-smi lists a GPU); SKIP (no GPU
# here); CUT (stopped by the budget); NOT RUN (the budget was spent before
# it started: nothing is launched then); NOT COVERED (what one shared GPU
# cannot test: NCCL between ranks); INFO (the machine). Each test runs
# with the time limit of its Bazel target (manifest.txt; passed to the
# test main as --timeout_s) or what is left of the budget, whichever is
# less, with OMP_NUM_THREADS=1.
#   --rerun-failed=SUMMARY  run only the items SUMMARY (an earlier run's
#                           summary.txt) says FAIL, CUT or NOT RUN
#   --runner=PROGRAM        run `PROGRAM NAME RANKS SECONDS` in place of each
#                           item's command (a stand-in, to test this script)
# Exits 1 if an item failed, 2 on bad arguments, else 0.
set -uo pipefail
budget="" out="" rerun="" runner="" pack=""
for a in "$@"; do
  case $a in
    --budget=*) budget=${a#--budget=} ;;
    --out=*) out=${a#--out=} ;;
    --rerun-failed=*) rerun=${a#--rerun-failed=} ;;
    --runner=*) runner=${a#--runner=} ;;
    --help)
      sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*) echo "$0: unknown option $a (--help lists them)" >&2; exit 2 ;;
    *) [[ -z $pack ]] || { echo "$0: one pack only" >&2; exit 2; }; pack=$a ;;
  esac
done
usage="usage: $0 PACK.tar.gz|PACK_DIR --budget=SECONDS --out=DIR [--rerun-failed=SUMMARY] [--runner=PROGRAM]"
[[ -n $pack && -n $out ]] || { echo "$usage" >&2; exit 2; }
[[ $budget =~ ^[0-9]+$ && $budget -gt 0 ]] ||
  { echo "$0: --budget must be a positive number of seconds" >&2; exit 2; }
[[ -z $rerun || -f $rerun ]] || { echo "$0: no summary $rerun" >&2; exit 2; }
start=$SECONDS
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)
[[ -z $rerun ]] || rerun=$(realpath "$rerun")
if [[ -f $pack ]]; then
  rm -rf "$out/pack"
  tar -C "$out" -xzf "$pack" || { echo "$0: cannot unpack $pack" >&2; exit 2; }
  dir=$out/pack
elif [[ -d $pack ]]; then
  dir=$(cd "$pack" && pwd)
else
  echo "$0: no pack $pack" >&2
  exit 2
fi
[[ -f $dir/manifest.txt ]] || { echo "$0: $dir has no manifest.txt" >&2; exit 2; }
summary=$out/summary.txt
: >"$summary.new"
rm -f "$out/figures.txt"

# cuDNN and NCCL: CUDA's folder, or PyTorch's nvidia-* Python packages.
libpath=$dir/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  [[ -d $d ]] && libpath=$libpath:$d
done
if command -v python3 >/dev/null; then
  for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    for d in "$site"/nvidia/*/lib; do [[ -d $d ]] && libpath=$libpath:$d; done
  done
fi
export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$dir/bin:$PATH
# Open MPI from the pack, not from where it was built.
export OPAL_PREFIX=$dir/openmpi
export OMPI_MCA_mca_base_component_path=$dir/openmpi/plugins
export PMIX_MCA_mca_base_component_path=$dir/openmpi/pmix
export OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
export OMP_NUM_THREADS=1

# The first GPU nvidia-smi lists (none where it fails or lists nothing).
gpu_name=""
if command -v nvidia-smi >/dev/null; then
  gpu_name=$(nvidia-smi -L 2>/dev/null) || gpu_name=""
  gpu_name=${gpu_name%%$'\n'*}
fi
gpu_listed=false
[[ -n $gpu_name ]] && gpu_listed=true

failed=0
line() {  # line VERDICT NAME RANKS SECONDS [NOTE]
  local l
  l=$(printf '%-11s %s ranks=%s seconds=%s%s' "$1" "$2" "$3" "$4" "${5:+ $5}")
  echo "$l"
  echo "$l" >>"$summary.new"
}
# Whether an item (NAME RANKS) is to run under --rerun-failed.
wanted() {
  [[ -z $rerun ]] && return 0
  grep -qE "^(FAIL|CUT|NOT RUN) +$1 ranks=$2 " "$rerun"
}
limit_of() { awk -v n="$1" '$1 == n {print $2}' "$dir/manifest.txt"; }

# item NAME RANKS LIMIT COMMAND...: runs COMMAND (or the stand-in) for at
# most LIMIT seconds or what is left of the budget, and says its verdict.
item() {
  local name=$1 ranks=$2 limit=$3
  shift 3
  wanted "$name" "$ranks" || return 0
  local left=$((budget - (SECONDS - start)))
  if ((left <= 0)); then
    line "NOT RUN" "$name" "$ranks" 0 "(budget spent)"
    return 0
  fi
  local cap=$limit cut=false
  if ((left < limit)); then cap=$left cut=true; fi
  local log=$out/logs/${name}_np$ranks.log t0=$SECONDS rc
  if [[ -n $runner ]]; then
    timeout -k 5 "$cap" "$runner" "$name" "$ranks" "$limit" >"$log" 2>&1
  else
    timeout -k 5 "$cap" "$@" >"$log" 2>&1
  fi
  rc=$?
  local took=$((SECONDS - t0))
  if ((rc == 124 || rc == 137)); then
    if $cut; then
      line CUT "$name" "$ranks" "$took" "(stopped when the budget ran out)"
    else
      line FAIL "$name" "$ranks" "$took" "(past its limit of $limit s: $log)"
      failed=$((failed + 1))
    fi
    return 0
  fi
  local nodev=false
  grep -qE 'no CUDA device|GPU test not run' "$log" && nodev=true
  local tally
  tally=$(grep -oE '^distconv: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?' "$log" | tail -1)
  local passed
  passed=$(sed -n 's/^distconv: \([0-9]*\) passed.*/\1/p' <<<"$tally")
  if ((rc != 0)); then
    line FAIL "$name" "$ranks" "$took" "(exit $rc: $log)"
    tail -15 "$log" | sed 's/^/    /'
    failed=$((failed + 1))
  elif $nodev && $gpu_listed; then
    line FAIL "$name" "$ranks" "$took" "(skipped for want of a CUDA device, but nvidia-smi lists a GPU: $log)"
    failed=$((failed + 1))
  elif ! $nodev && grep -q 'benchmark not run' "$log"; then
    line SKIP "$name" "$ranks" "$took" "($(grep -m1 'benchmark not run' "$log"))"
  elif $nodev && [[ -z $tally || ${passed:-0} -eq 0 ]]; then
    line SKIP "$name" "$ranks" "$took" "(no CUDA device here${tally:+; $tally})"
  else
    line PASS "$name" "$ranks" "$took" "${tally:+($tally)}"
  fi
}

# The pack's mpirun (an array: `timeout` runs programs, not functions).
mpi=("$dir/bin/mpirun" --allow-run-as-root -x LD_LIBRARY_PATH -x OMP_NUM_THREADS
  -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path)
test_item() {  # test_item NAME RANKS: a test binary, with its Bazel time limit
  local limit
  limit=$(limit_of "$1")
  [[ -n $limit ]] || { line FAIL "$1" "$2" 0 "(not in manifest.txt)"; failed=$((failed + 1)); return 0; }
  item "$1" "$2" "$limit" "${mpi[@]}" -np "$2" "$dir/bin/$1" --gtest_color=no \
    --timeout_s="$limit"
}

# 1. The machine.
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L 2>&1
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode,mig.mode.current \
      --format=csv 2>&1
    nvidia-smi 2>&1 | grep -o 'CUDA Version: [0-9.]*' | head -1
  else
    echo "nvidia-smi: not found"
  fi
  if command -v python3 >/dev/null; then
    python3 - <<'PY' 2>&1
try:
    import torch
    print("PyTorch", torch.__version__, "CUDA", torch.version.cuda,
          "cuDNN", torch.backends.cudnn.version(),
          "NCCL", ".".join(map(str, torch.cuda.nccl.version()))
          if torch.cuda.is_available() else "(no CUDA device for PyTorch)")
except Exception as e:  # no PyTorch, or one without CUDA
    print("PyTorch: not usable:", e)
PY
  fi
  for l in ${LD_LIBRARY_PATH//:/ }; do
    ls "$l"/libcudnn.so.* "$l"/libnccl.so.* "$l"/libcudart.so.* 2>/dev/null
  done | sed 's|.*/||' | sort -u | sed 's/^/found: /'
} >"$out/machine.txt"
line INFO machine 0 "$((SECONDS - start))" "(${gpu_name:-no GPU listed by nvidia-smi}): $out/machine.txt"
# Whether the library finds a CUDA device (distconv_bench --device=gpu on
# a one-cell problem); where it does not, the layer checks, the timed
# layers and the examples on the GPU are not launched (SKIP), and with a
# GPU listed that is a FAIL.
lib_gpu=true
probe_log=$out/logs/device_probe_np1.log
if [[ -n $runner ]]; then
  timeout -k 5 60 "$runner" device_probe 1 60 >"$probe_log" 2>&1
else
  timeout -k 5 60 "${mpi[@]}" -np 1 "$dir/bin/distconv_bench" --device=gpu --eltwise \
    mb1ic1ih4 >"$probe_log" 2>&1
fi
if grep -q 'no CUDA device' "$probe_log"; then
  lib_gpu=false
  if $gpu_listed; then
    line FAIL device_probe 1 0 "(the library finds no CUDA device, but nvidia-smi lists a GPU: $probe_log)"
    failed=$((failed + 1))
  fi
fi
gpu_item() {  # gpu_item NAME RANKS LIMIT COMMAND...: item where the library has a GPU
  if $lib_gpu; then
    item "$@"
  elif wanted "$1" "$2"; then
    line SKIP "$1" "$2" 0 "(no CUDA device here: not launched)"
  fi
}

# The test binaries, the cuDNN kernel tests first, and their rank counts
# (every one runs at 1 rank; the layers at 2 in stage 3, 3 and 4 in 5).
tests=(
  "cudnn_conv_test 1"
  "box_segments_test 1"
  "box_pack_test 1"
  "pool_window_test 1"
  "cuda_pool_test 1"
  "cuda_batch_norm_test 1"
  "device_space_test 1 2"
  "device_halo_exchange_test 1 2 3 4"
  "device_convolution_test 1 2 3 4"
  "device_deconvolution_test 1 2 3 4"
  "device_pooling_test 1 2 3 4"
  "device_batch_norm_test 1 2 3 4"
  "device_redistribute_test 1 2 3 4"
  "device_activation_test 1 2 3"
  "device_add_test 1 2 3"
  "device_concat_test 1 2 3"
  "device_upsample_test 1 2 3"
  "device_copy_shard_test 1 2 3 4"
  "device_softmax_test 1 2 3"
  "device_loss_test 1 2 3 4"
)
tests_at() {  # tests_at R...: every test at each of these rank counts
  local t name ranks n r
  for t in "${tests[@]}"; do
    read -r name ranks <<<"$t"
    for r in "$@"; do
      for n in $ranks; do
        ((n == r)) && test_item "$name" "$n"
      done
    done
  done
  return 0
}

# distconv_bench --device=gpu: each driver's layer in GPU memory against
# the host layer on the same grid and inputs (ranks sharing the GPU).
img=mb2ic3ih10iw7
checks=(
  "1 2 4|--conv ${img}oc4kh3kw3ph1pw1 ${img}oc6kh3kw2sh2ph1g3 mb2ic16ih64oc16kh3ph1"
  "1 2 4|--conv --dt=f64 ${img}oc4kh3kw3ph1pw1 mb1ic4id12ih10iw8oc4kd3kh3kw3pd1ph1pw1"
  "4|--conv --grid=4x1x1x1 ${img}oc4kh3kw3ph1pw1"
  "2 4|--conv --transport=cuda_ipc ${img}oc4kh3kw3ph1pw1 mb2ic16ih64oc16kh3ph1"
  "2 4|--pool --alg=max --transport=cuda_ipc ${img}kh3kw3sh2ph1pw1"
  "2 4|--deconv --transport=cuda_ipc mb2ic4ih5iw4oc3kh4kw3sh2ph1pw1"
  "2|--conv --grid=1x2x1x1 mb2ic8ih10iw7oc6kh3kw3ph1pw1"
  "4|--conv --grid=1x2x2x1 --channels=stationary_input mb2ic8ih10iw7oc6kh3kw3ph1pw1"
  "4|--conv --grid=1x4x1x1 --channels=stationary_weights --dt=f64 mb2ic8ih10iw7oc6kh3kw3ph1pw1"
  "1 2 4|--conv --math=tf32 mb2ic16ih64oc16kh3ph1"
  "1 2 4|--deconv mb2ic4ih5iw4oc3kh4kw3sh2ph1pw1 mb2ic16ih32oc16kh2sh2"
  "1 2 4|--deconv --dt=f64 mb2ic4ih5iw4oc3kh4kw3sh2ph1pw1"
  "1 2 4|--pool --alg=max ${img}kh3kw3sh2ph1pw1 mb2ic16ih64kh3sh2ph1"
  "1 2 4|--pool --alg=avg_np ${img}kh3kw3ph1pw1"
  "1 2 4|--pool --alg=avg_p --dt=f64 ${img}kh2kw2sh2"
  "1 2 4|--bnorm $img mb4ic16ih64"
  "1 2 4|--bnorm --dt=f64 $img"
  "1 2 4|--eltwise --alg=relu $img"
  "1 2 4|--eltwise --alg=leaky_relu $img"
  "1 2 4|--eltwise --alg=add $img"
  "1 2 4|--eltwise --alg=concat $img"
  "1 2 4|--eltwise --alg=nearest --dt=f64 $img"
  "1 2 4|--conv --dt=bf16 ${img}oc4kh3kw3ph1pw1 mb2ic16ih64oc16kh3ph1"
  "2|--conv --dt=bf16 --grid=1x2x1x1 mb2ic8ih10iw7oc6kh3kw3ph1pw1"
  "1 2 4|--deconv --dt=bf16 mb2ic4ih5iw4oc3kh4kw3sh2ph1pw1"
  "1 2 4|--pool --alg=max --dt=bf16 ${img}kh3kw3sh2ph1pw1"
  "1 2 4|--pool --alg=avg_p --dt=bf16 ${img}kh2kw2sh2"
  "1 2 4|--bnorm --dt=bf16 $img"
  "1 2 4|--eltwise --alg=leaky_relu --dt=bf16 $img"
  "1 2 4|--eltwise --alg=add --dt=bf16 $img"
  "1 2 4|--eltwise --alg=concat --dt=bf16 $img"
  "1 2 4|--eltwise --alg=nearest --dt=bf16 $img"
)
checks_at() {  # checks_at R...: the checks at each of these rank counts
  local i ranks args n r
  for r in "$@"; do
    for i in "${!checks[@]}"; do
      IFS='|' read -r ranks args <<<"${checks[$i]}"
      for n in $ranks; do
        ((n == r)) || continue
        read -ra a <<<"$args"
        gpu_item "distconv_bench_check$i" "$n" 300 "${mpi[@]}" -np "$n" "$dir/bin/distconv_bench" \
          --device=gpu "${a[@]}"
      done
    done
  done
  return 0
}

# 2. Every test at 1 rank.
tests_at 1
# 3. The layers at 2 ranks: the tests, then the layer checks at 1 and 2.
tests_at 2
checks_at 1 2
# 4. Figures.
item gpu_conv_bench 1 300 "${mpi[@]}" -np 1 "$dir/bin/gpu_conv_bench"
if command -v python3 >/dev/null; then
  item torch_conv_bench 1 300 python3 "$dir/bin/torch_conv_bench.py"
fi
item gpu_pack_bench 1 300 "$dir/bin/gpu_pack_bench"
timed=(
  "--conv mb1ic16ih1024oc16kh3ph1"
  "--conv mb8ic64ih256oc64kh3ph1"
  "--conv --math=tf32 mb8ic64ih256oc64kh3ph1"
  "--conv mb1ic16id128ih128oc16kd3kh3pd1ph1"
  "--deconv mb1ic32ih512oc16kh2sh2"
  "--pool --alg=max mb1ic16ih1024kh3sh2ph1"
  "--bnorm mb8ic64ih256"
)
median_of() {  # median_of LOG: median_ms of distconv_bench --json's line
  sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p' "$1" 2>/dev/null | head -1
}
for i in "${!timed[@]}"; do
  read -ra a <<<"${timed[$i]}"
  gpu_item "distconv_bench_layer$i" 1 300 "${mpi[@]}" -np 1 "$dir/bin/distconv_bench" \
    --device=gpu --mode=perf --json "${a[@]}"
  gpu_item "distconv_bench_cudnn$i" 1 300 "${mpi[@]}" -np 1 "$dir/bin/distconv_bench" \
    --device=gpu --mode=perf --json --impl=cudnn "${a[@]}"
  l=$(median_of "$out/logs/distconv_bench_layer${i}_np1.log")
  b=$(median_of "$out/logs/distconv_bench_cudnn${i}_np1.log")
  # Only from two runs of this check that passed (not an earlier run's logs).
  if [[ -n $l && -n $b ]] &&
      grep -q "^PASS  *distconv_bench_layer$i ranks=1 " "$summary.new" &&
      grep -q "^PASS  *distconv_bench_cudnn$i ranks=1 " "$summary.new"; then
    echo "FIGURE      cudnn/layer $(awk -v b="$b" -v l="$l" 'BEGIN {printf "%.3f", b / l}'): ${timed[$i]} (layer $l ms, cuDNN $b ms)" |
      tee -a "$out/figures.txt"
  fi
done
# The convolution on ranks sharing the GPU: the share of the step blocked
# on halo exchanges and gradient sums, per transport.
for transport in host_staged cuda_ipc; do
  gpu_item "distconv_bench_shared_$transport" 2 300 "${mpi[@]}" -np 2 \
    "$dir/bin/distconv_bench" --device=gpu --mode=perf --json \
    --transport=$transport --conv mb1ic16ih1024oc16kh3ph1
done
# 5. 3 and 4 ranks, then the examples.
tests_at 3 4
checks_at 4
loss_item() {  # loss_item EXAMPLE TOLERANCE TAG "FLAGS" RUNS...
  local name=$1 tolerance=$2 tag=$3 flags=$4
  shift 4
  gpu_item "${name}_gpu_$tag" 4 600 env MPIRUN_TEST="$dir/bin/pack_mpirun.sh" \
    TEST_TMPDIR="$(mktemp -d)" bash "$dir/bin/loss_curve_test.sh" \
    "$dir/bin/$name" 300 "$tolerance" "$flags" "$@"
}
loss_item segmentation 1e-4 f32 \
  "--size=50 --samples=2 --channels=5 --width=8 --steps=4 --lr=0.05" \
  1:1x1x1x1 1:1x1x1x1:--device=gpu 2:1x1x2x1:--device=gpu \
  3:1x1x3x1:--device=gpu 4:2x1x2x1:--device=gpu \
  4:1x1x4x1,2x1x2x1,1x1x1x4:--device=gpu
loss_item cosmoflow 1e-4 f32 \
  "--size=16 --samples=4 --stacks=2 --width=4 --hidden=8 --steps=4 --lr=0.002" \
  1:1x1x1x1x1 1:1x1x1x1x1:--device=gpu 2:1x1x2x1x1:--device=gpu \
  3:1x1x1x1x3:--device=gpu 4:2x1x1x2x1:--device=gpu \
  4:1x1x2x2x1,4x1x1x1x1,2x1x2x1x1:--device=gpu
loss_item segmentation 1e-3 bf16 \
  "--size=50 --samples=2 --channels=5 --width=8 --steps=4 --lr=0.05 --precision=bf16" \
  1:1x1x1x1 1:1x1x1x1:--device=gpu 2:1x1x2x1:--device=gpu \
  4:2x1x2x1:--device=gpu
loss_item cosmoflow 4e-2 bf16 \
  "--size=16 --samples=4 --stacks=2 --width=4 --hidden=8 --steps=4 --lr=0.002 --precision=bf16" \
  1:1x1x1x1x1 1:1x1x1x1x1:--device=gpu 3:1x1x1x1x3:--device=gpu
line "NOT COVERED" nccl_between_ranks 2 0 "(NCCL needs one GPU per rank; this machine has one)"

mv "$summary.new" "$summary"
counts=$(awk '{v = $1 == "NOT" ? $1 " " $2 : $1; n[v]++} END {for (v in n) printf "%s %d, ", v, n[v]}' "$summary")
echo "device check: ${counts%, } in $((SECONDS - start)) s of $budget; summary $summary"
[[ -f $out/figures.txt ]] && echo "figures: $out/figures.txt, the benchmarks' logs in $out/logs"
((failed == 0)) || exit 1
exit 0
