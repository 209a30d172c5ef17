#!/bin/bash
# Builds the GPU tests and benchmarks (--config=cuda) and packs them, with
# the shared libraries and the Open MPI launcher they need, into one
# compressed archive that tests/gpu/device_check.sh runs on a machine with
# a GPU and no Bazel, MPI or network:
#   tests/gpu/collect.sh PACK.tar.gz   # here (Debian 12, CUDA 13 installed)
#   ... carry PACK.tar.gz to the GPU machine ...
#   tests/gpu/device_check.sh PACK.tar.gz --budget=360 --out=OUT   # there
# (collect.sh DIR, a name not ending in .tar.gz, leaves the folder
# unpacked.) The pack's manifest.txt gives each test the time limit its
# Bazel target has (mpi_cc_test's timeout_s; a plain cc_test's size).
# Left out, to keep the pack small (about 80 MB unpacked, most of it
# oneDNN and the test binaries): the C and C++ runtime and the GPU driver,
# which every machine has (the GPU machines' are newer), and cuDNN and NCCL
# (hundreds of MB), which device_check.sh finds there (CUDA's own folder,
# or the nvidia-* Python packages that come with PyTorch).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
if [[ ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
[[ $# -eq 1 && $1 != -* ]] || { echo "usage: $0 PACK.tar.gz | DIR" >&2; exit 2; }
archive=""
if [[ $1 == *.tar.gz ]]; then
  archive=$(realpath -m "$1")
  out=$(mktemp -d)/pack
else
  out=$1
fi

# name:bazel target of each program. Tests run under mpirun (their main is
# tests/mpi_test_main.cc); the ranks each runs at are in device_check.sh.
programs=(
  box_segments_test://halo/cuda:box_segments_test
  box_pack_test://halo/cuda:box_pack_test
  device_space_test://distconv:device_space_test_bin
  device_halo_exchange_test://halo:device_halo_exchange_test_bin
  cudnn_conv_test://kernels/cudnn:conv_test
  pool_window_test://kernels/cuda:pool_window_test
  cuda_pool_test://kernels/cuda:pool_test
  cuda_batch_norm_test://kernels/cuda:batch_norm_test
  device_convolution_test://layers:device_convolution_test_bin
  device_pooling_test://layers:device_pooling_test_bin
  device_activation_test://layers:device_activation_test_bin
  device_batch_norm_test://layers:device_batch_norm_test_bin
  device_add_test://layers:device_add_test_bin
  device_concat_test://layers:device_concat_test_bin
  device_upsample_test://layers:device_upsample_test_bin
  device_deconvolution_test://layers:device_deconvolution_test_bin
  device_softmax_test://layers:device_softmax_test_bin
  device_loss_test://layers:device_loss_test_bin
  device_copy_shard_test://layers:device_copy_shard_test_bin
  device_redistribute_test://layers:device_redistribute_test_bin
  gpu_pack_bench://perf:gpu_pack_bench
  gpu_conv_bench://perf:gpu_conv_bench
  distconv_bench://perf:distconv_bench
  segmentation://examples:segmentation
  cosmoflow://examples:cosmoflow
)
targets=()
for p in "${programs[@]}"; do targets+=("${p#*:}"); done
bazel build --config=cuda "${targets[@]}"
bin=$(bazel info --config=cuda bazel-bin)

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/openmpi/plugins" "$out/openmpi/pmix" \
  "$out/openmpi/share"
built=()  # where the programs are, for ldd (their rpaths are relative)
for p in "${programs[@]}"; do
  name=${p%%:*} target=${p#*:}
  path=${target#//}
  built+=("$bin/${path/://}")
  cp "$bin/${path/://}" "$out/bin/$name"
done

# Open MPI's launcher and its components (Debian's layout).
ompi=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
pmix=/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
cp "$(readlink -f "$(command -v mpirun)")" "$out/bin/mpirun"
cp "$(command -v orted)" "$out/bin/orted"
cp "$ompi"/*.so "$out/openmpi/plugins/"
if [[ -d $pmix ]]; then cp "$pmix"/*.so "$out/openmpi/pmix/"; fi
# Help texts (mpirun's messages), where OPAL_PREFIX makes it look.
if [[ -d /usr/share/openmpi ]]; then cp -r /usr/share/openmpi "$out/openmpi/share/"; fi

# Every shared library those need (Bazel's own libraries of the tests too),
# but the ones every machine (or the GPU machine's CUDA) has.
skip='/(libc|libm|libstdc\+\+|libgcc_s|libatomic|libpthread|librt|libdl|libutil|libresolv|ld-linux[^/]*|linux-vdso|libcuda|libnccl|libcudnn[^/]*)\.so'
for f in "${built[@]}" "$out"/bin/mpirun "$out"/bin/orted \
    "$out"/openmpi/plugins/*.so "$out"/openmpi/pmix/*.so; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | grep -vE "$skip" | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
# The loss-curve check of the examples and its launcher.
cp examples/loss_curve_test.sh tests/gpu/pack_mpirun.sh "$out/bin/"
# The PyTorch side of the convolution benchmark (run with the GPU
# machine's own Python).
cp perf/torch_conv_bench.py "$out/bin/"
cp tests/gpu/device_check.sh "$out/bin/"

# manifest.txt: "name seconds" per test, the time limit of its Bazel
# target: mpi_cc_test passes timeout_s to mpirun_test.sh (its third
# argument, for the test main's --timeout_s); a cc_test has its size's.
for p in "${programs[@]}"; do
  name=${p%%:*} target=${p#*:}
  [[ $name == *_test ]] || continue
  if [[ $target == *_bin ]]; then
    limit=$(bazel query --output=build "${target%_bin}_np1" 2>/dev/null |
      sed -n 's/^ *args = \["1", "[^"]*", "\([0-9]*\)".*/\1/p')
  else
    size=$(bazel query --output=build "$target" 2>/dev/null |
      sed -n 's/^ *size = "\([a-z]*\)".*/\1/p')
    case ${size:-medium} in
      small) limit=60 ;; medium) limit=300 ;; large) limit=900 ;; *) limit=3600 ;;
    esac
  fi
  [[ -n $limit ]] || { echo "$0: no time limit found for $target" >&2; exit 1; }
  echo "$name $limit"
done >"$out/manifest.txt"

if [[ -n $archive ]]; then
  tar -C "$(dirname "$out")" -czf "$archive" pack
  rm -rf "$(dirname "$out")"
  echo "packed into $archive: $(du -h "$archive" | cut -f1)"
else
  echo "collected into $out: $(du -sh "$out" | cut -f1)"
fi
