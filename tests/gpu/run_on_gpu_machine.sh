#!/bin/bash
# Runs the GPU tests and benchmarks that tests/gpu/collect.sh put in DIR, on
# a machine with a GPU and no Bazel, MPI or network (it also runs anywhere
# else: without a GPU the GPU cases skip, saying so, and the checks made
# before any device work still run).
#   tests/gpu/run_on_gpu_machine.sh DIR [LOG_DIR] [--only=PART,...]
# Each test runs under DIR's own mpirun at the rank counts below (several
# ranks share one GPU through the host-staged transport), with a time limit
# so a deadlock fails fast; logs go to LOG_DIR (default DIR/logs). Then the
# benchmarks run once. Exits non-zero if any test fails. The parts, in
# order (default all; --only runs some, to split a run over short GPU
# windows): tests, benchmarks, layers (distconv_bench --device=gpu),
# examples (the training examples on the GPU).
set -uo pipefail
only=tests,benchmarks,layers,examples
positional=()
for a in "$@"; do
  case $a in
    --only=*) only=${a#--only=} ;;
    *) positional+=("$a") ;;
  esac
done
set -- "${positional[@]}"
[[ $# -ge 1 ]] || { echo "usage: $0 DIR [LOG_DIR] [--only=PART,...]" >&2; exit 2; }
for part in ${only//,/ }; do
  case $part in
    tests | benchmarks | layers | examples) ;;
    *) echo "$0: --only: no part $part" >&2; exit 2 ;;
  esac
done
runs() { [[ ",$only," == *",$1,"* ]]; }
dir=$(cd "$1" && pwd)
logs=${2:-$dir/logs}
mkdir -p "$logs"

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
# Open MPI from DIR, not from where it was built.
export OPAL_PREFIX=$dir/openmpi
export OMPI_MCA_mca_base_component_path=$dir/openmpi/plugins
export PMIX_MCA_mca_base_component_path=$dir/openmpi/pmix
export OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU: $(nvidia-smi -L | head -1)"
else
  echo "GPU: none found; GPU test cases will skip (visibly)"
fi

# test name and the rank counts it runs at.
tests=(
  "box_segments_test 1"
  "box_pack_test 1"
  "device_space_test 1 2"
  "device_halo_exchange_test 1 2 3 4"
  "cudnn_conv_test 1"
  "pool_window_test 1"
  "cuda_pool_test 1"
  "cuda_batch_norm_test 1"
  "device_convolution_test 1 2 3 4"
  "device_pooling_test 1 2 3 4"
  "device_activation_test 1 2 3"
  "device_batch_norm_test 1 2 3 4"
  "device_add_test 1 2 3"
  "device_concat_test 1 2 3"
  "device_upsample_test 1 2 3"
  "device_deconvolution_test 1 2 3 4"
  "device_softmax_test 1 2 3"
  "device_loss_test 1 2 3 4"
  "device_copy_shard_test 1 2 3 4"
  "device_redistribute_test 1 2 3 4"
)
failed=()
for t in "${tests[@]}"; do
  runs tests || break
  read -r name ranks <<<"$t"
  for n in $ranks; do
    log=$logs/${name}_np$n.log
    timeout 600 "$dir/bin/mpirun" --allow-run-as-root -np "$n" \
      -x LD_LIBRARY_PATH -x OMPI_MCA_mca_base_component_path \
      -x PMIX_MCA_mca_base_component_path "$dir/bin/$name" --gtest_color=no \
      >"$log" 2>&1
    rc=$?
    passed=$(grep -c '^\[       OK \]' "$log")
    skipped=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log")
    if ((rc == 0)); then
      echo "PASS $name at $n ranks ($passed ok, $skipped skipped)"
    else
      echo "FAIL $name at $n ranks (exit $rc): $log"
      tail -20 "$log" | sed 's/^/    /'
      failed+=("${name}_np$n")
    fi
  done
done
# Say why cases skipped (once per message).
if runs tests; then
  cat "$logs"/*_np*.log | grep -hE 'GPU test not run|no CUDA device' |
    sort | uniq -c | sed 's/^/  /'
fi

# Benchmarks: each runs once; one that fails fails the run.
bench() {
  local name=$1
  shift
  echo "--- $name"
  timeout 600 "$@" 2>&1 | tee "$logs/$name.log"
  local rc=${PIPESTATUS[0]}
  if ((rc != 0)); then
    echo "FAIL $name (exit $rc)"
    failed+=("$name")
  fi
}
if runs benchmarks; then
  bench gpu_pack_bench "$dir/bin/gpu_pack_bench"
  bench gpu_conv_bench "$dir/bin/mpirun" --allow-run-as-root -np 1 \
    -x LD_LIBRARY_PATH -x OMPI_MCA_mca_base_component_path \
    -x PMIX_MCA_mca_base_component_path "$dir/bin/gpu_conv_bench"
  if command -v python3 >/dev/null; then
    bench torch_conv_bench python3 "$dir/bin/torch_conv_bench.py"
  fi
fi

# distconv_bench --device=gpu: every driver's layer in GPU memory against
# the host layer on the same grid and inputs (ranks sharing the GPU), then
# timed against cuDNN on the whole problem in one process (cudnn/layer:
# 1.0 as fast, above faster), and the convolution on 2 and 4 ranks (the
# share of the step blocked on halos and gradient sums).
layer_bench() {  # layer_bench RANKS ARGS...: one run, its output
  local n=$1
  shift
  timeout 600 "$dir/bin/mpirun" --allow-run-as-root -np "$n" \
    -x LD_LIBRARY_PATH -x OMPI_MCA_mca_base_component_path \
    -x PMIX_MCA_mca_base_component_path "$dir/bin/distconv_bench" \
    --device=gpu "$@" 2>&1
}
json_field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p" | head -1; }
probe=""
if runs layers || runs examples; then
  echo "--- distconv_bench --device=gpu, the examples --device=gpu"
  probe=$(layer_bench 1 --eltwise mb1ic1ih4)
fi
if ! runs layers && ! runs examples; then
  :
elif grep -q "no CUDA device" <<<"$probe"; then
  echo "  no CUDA device on this machine: distconv_bench --device=gpu and the"
  echo "  examples on the GPU not run"
else
  if runs layers; then
    img=mb2ic3ih10iw7
    # ranks|arguments (the grid: all ranks along H unless given).
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
    rm -f "$logs"/distconv_bench_*.log
    for i in "${!checks[@]}"; do
      IFS='|' read -r ranks args <<<"${checks[$i]}"
      for n in $ranks; do
        read -ra a <<<"$args"
        out=$(layer_bench "$n" "${a[@]}")
        rc=$?
        printf '### -np %s %s\n%s\n' "$n" "$args" "$out" \
          >>"$logs/distconv_bench_checks.log"
        if ((rc == 0)); then
          echo "PASS distconv_bench -np $n $args ($(grep -c ' PASS ' <<<"$out") problems)"
        else
          echo "FAIL distconv_bench -np $n $args (exit $rc)"
          grep -v ' PASS ' <<<"$out" | tail -5 | sed 's/^/    /'
          failed+=("distconv_bench_check${i}_np$n")
        fi
      done
    done
    timed=(
      "--conv mb1ic16ih1024oc16kh3ph1"
      "--conv mb8ic64ih256oc64kh3ph1"
      "--conv --math=tf32 mb8ic64ih256oc64kh3ph1"
      "--conv mb1ic16id128ih128oc16kd3kh3pd1ph1"
      "--deconv mb1ic32ih512oc16kh2sh2"
      "--pool --alg=max mb1ic16ih1024kh3sh2ph1"
      "--pool --alg=avg_np mb8ic64ih256kh2sh2"
      "--bnorm mb8ic64ih256"
      "--eltwise --alg=relu mb8ic64ih256"
      "--eltwise --alg=add mb8ic64ih256"
    )
    for i in "${!timed[@]}"; do
      t=${timed[$i]}
      read -ra a <<<"$t"
      layer=$(layer_bench 1 --mode=perf --json "${a[@]}")
      base=$(layer_bench 1 --mode=perf --json --impl=cudnn "${a[@]}")
      printf '### %s\n%s\n%s\n' "$t" "$layer" "$base" \
        >>"$logs/distconv_bench_perf.log"
      l=$(json_field median_ms <<<"$layer") b=$(json_field median_ms <<<"$base")
      if [[ $(json_field status <<<"$layer") == OK &&
            $(json_field status <<<"$base") == OK ]]; then
        echo "RATIO cudnn/layer $(awk -v b="$b" -v l="$l" 'BEGIN{printf "%.3f", b / l}'): $t (layer $l ms, cudnn $b ms)"
      else
        echo "FAIL distconv_bench --mode=perf $t"
        echo "$layer" "$base" | tail -4 | sed 's/^/    /'
        failed+=("distconv_bench_timed$i")
      fi
    done
    for transport in host_staged cuda_ipc; do
      for n in 2 4; do
        out=$(layer_bench "$n" --mode=perf --json --transport=$transport \
          --conv mb1ic16ih1024oc16kh3ph1)
        printf '### -np %s %s\n%s\n' "$n" "$transport" "$out" \
          >>"$logs/distconv_bench_perf.log"
        m=$(json_field median_ms <<<"$out") w=$(json_field comm_wait_ms <<<"$out")
        if [[ -n $w && $(json_field status <<<"$out") == OK ]]; then
          echo "SHARED GPU -np $n $transport conv mb1ic16ih1024oc16kh3ph1: step $m ms, blocked $w ms ($(awk -v w="$w" -v m="$m" 'BEGIN{printf "%.1f", 100 * w / m}')%)"
        else
          echo "FAIL distconv_bench -np $n --mode=perf --transport=$transport --conv"
          failed+=("distconv_bench_perf_np${n}_$transport")
        fi
      done
    done
  fi

  if runs examples; then
    # The examples trained in GPU memory: their loss curves within 1e-4 of
    # the host's on one rank, on 1 to 4 ranks (3: uneven splits, which move
    # tensors between layers; a grid per unit: moves between grids).
    loss_curves() {  # loss_curves EXAMPLE TOLERANCE TAG "FLAGS" RUNS...
      local name=$1 tolerance=$2 tag=$3 flags=$4
      shift 4
      echo "--- $name --device=gpu $tag"
      local log="$logs/${name}_gpu_$tag.log"
      if MPIRUN_TEST="$dir/bin/pack_mpirun.sh" TEST_TMPDIR=$(mktemp -d) \
          bash "$dir/bin/loss_curve_test.sh" "$dir/bin/$name" 300 \
          "$tolerance" "$flags" "$@" >"$log" 2>&1; then
        echo "PASS $name $tag: $(tail -1 "$log")"
      else
        echo "FAIL $name --device=gpu $tag: $log"
        tail -12 "$log" | sed 's/^/    /'
        failed+=("${name}_gpu_$tag")
      fi
    }
    loss_curves segmentation 1e-4 f32 \
      "--size=50 --samples=2 --channels=5 --width=8 --steps=4 --lr=0.05" \
      1:1x1x1x1 1:1x1x1x1:--device=gpu 2:1x1x2x1:--device=gpu \
      3:1x1x3x1:--device=gpu 4:2x1x2x1:--device=gpu \
      4:1x1x4x1,2x1x2x1,1x1x1x4:--device=gpu
    loss_curves cosmoflow 1e-4 f32 \
      "--size=16 --samples=4 --stacks=2 --width=4 --hidden=8 --steps=4 --lr=0.002" \
      1:1x1x1x1x1 1:1x1x1x1x1:--device=gpu 2:1x1x2x1x1:--device=gpu \
      3:1x1x1x1x3:--device=gpu 4:2x1x1x2x1:--device=gpu \
      4:1x1x2x2x1,4x1x1x1x1,2x1x2x1x1:--device=gpu
    # bf16 (fp32 parameters) in GPU memory against the host's bf16 run on
    # one rank, within the bounds the host's bf16 curves keep to fp32's.
    loss_curves segmentation 1e-3 bf16 \
      "--size=50 --samples=2 --channels=5 --width=8 --steps=4 --lr=0.05 --precision=bf16" \
      1:1x1x1x1 1:1x1x1x1:--device=gpu 2:1x1x2x1:--device=gpu \
      4:2x1x2x1:--device=gpu
    loss_curves cosmoflow 4e-2 bf16 \
      "--size=16 --samples=4 --stacks=2 --width=4 --hidden=8 --steps=4 --lr=0.002 --precision=bf16" \
      1:1x1x1x1x1 1:1x1x1x1x1:--device=gpu 3:1x1x1x1x3:--device=gpu
  fi
fi

if ((${#failed[@]})); then
  echo "gpu tests: FAILED: ${failed[*]}"
  exit 1
fi
echo "gpu tests: all passed"
