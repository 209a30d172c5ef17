#!/bin/bash
# Runs the GPU tests and benchmarks that tests/gpu/collect.sh put in DIR, on
# a machine with a GPU and no Bazel, MPI or network (it also runs anywhere
# else: without a GPU the GPU cases skip, saying so, and the checks made
# before any device work still run).
#   tests/gpu/run_on_gpu_machine.sh DIR [LOG_DIR]
# Each test runs under DIR's own mpirun at the rank counts below (several
# ranks share one GPU through the host-staged transport), with a time limit
# so a deadlock fails fast; logs go to LOG_DIR (default DIR/logs). Then the
# benchmarks run once. Exits non-zero if any test fails.
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 DIR [LOG_DIR]" >&2; exit 2; }
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
)
failed=()
for t in "${tests[@]}"; do
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
cat "$logs"/*.log | grep -hE 'GPU test not run|no CUDA device' | sort | uniq -c | sed 's/^/  /'

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
bench gpu_pack_bench "$dir/bin/gpu_pack_bench"
bench gpu_conv_bench "$dir/bin/mpirun" --allow-run-as-root -np 1 \
  -x LD_LIBRARY_PATH -x OMPI_MCA_mca_base_component_path \
  -x PMIX_MCA_mca_base_component_path "$dir/bin/gpu_conv_bench"
bench gpu_pool_bench "$dir/bin/mpirun" --allow-run-as-root -np 1 \
  -x LD_LIBRARY_PATH -x OMPI_MCA_mca_base_component_path \
  -x PMIX_MCA_mca_base_component_path "$dir/bin/gpu_pool_bench"
if command -v python3 >/dev/null; then
  bench torch_conv_bench python3 "$dir/bin/torch_conv_bench.py"
fi

if ((${#failed[@]})); then
  echo "gpu tests: FAILED: ${failed[*]}"
  exit 1
fi
echo "gpu tests: all passed"
