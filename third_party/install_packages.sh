#!/bin/bash
# Installs what distconv builds with, skipping what is already there:
#  - Debian 12 packages (apt-get update runs once, only if something is
#    missing);
#  - oneDNN 3.2 from PyPI (onednn-cpu-gomp and onednn-devel-cpu-gomp
#    2023.2.0: CPU only, GNU OpenMP, no other runtime), the oneDNN distconv
#    builds with, unpacked from its wheels into /opt/distconv/onednn-3.2:
#    headers, library and CMake package (third_party/dnnl.BUILD). Debian
#    has no oneDNN 3; its 2.6 (libdnnl-dev, also PyTorch's) stays for
#    perf/compare_onednn_versions.sh.
# Sourced by tests/run.sh and examples/demo.sh; as non-root it prints what
# to install.
#   third_party/install_packages.sh
set -euo pipefail

packages=(bazel-bootstrap libopenmpi-dev openmpi-bin libdnnl-dev googletest
          libgtest-dev libbenchmark-dev libhdf5-openmpi-dev python3-h5py
          python3-numpy python3-dev pybind11-dev python3-torch python3-mpi4py
          cmake pkg-config clang libclang-rt-14-dev iproute2 python3-pip
          unzip)
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
onednn3=/opt/distconv/onednn-3.2
onednn3_missing=0
[[ -f $onednn3/lib/libdnnl.so.3 && -f $onednn3/include/dnnl.hpp &&
   -f $onednn3/lib/cmake/dnnl/dnnl-config.cmake ]] || onednn3_missing=1
if ((${#missing[@]} || onednn3_missing)) && ((EUID != 0)); then
  echo "distconv: missing packages; as root run:" >&2
  ((${#missing[@]} == 0)) ||
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  ((onednn3_missing == 0)) || echo "  $0   (oneDNN 3.2 into $onednn3)" >&2
  exit 1
fi
if ((${#missing[@]})); then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
if ((onednn3_missing)); then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  /usr/bin/python3 -m pip download --quiet --no-deps --dest "$work" \
    onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0
  for wheel in "$work"/*.whl; do unzip -q -o "$wheel" -d "$work/files"; done
  mkdir -p "$onednn3/lib"
  rm -rf "$onednn3/include" "$onednn3/lib/cmake"
  cp -r "$work"/files/onednn_devel_cpu_gomp-*.data/data/include "$onednn3/"
  cp -r "$work"/files/onednn_devel_cpu_gomp-*.data/data/lib/cmake \
    "$onednn3/lib/"
  # The wheel holds the library three times over (no symbolic links).
  cp "$work"/files/onednn_cpu_gomp-*.data/data/lib/libdnnl.so.3.2 \
    "$onednn3/lib/"
  ln -sf libdnnl.so.3.2 "$onednn3/lib/libdnnl.so.3"
  ln -sf libdnnl.so.3 "$onednn3/lib/libdnnl.so"
  echo "distconv: oneDNN 3.2 unpacked into $onednn3"
fi
