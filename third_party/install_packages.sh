#!/bin/bash
# Installs the Debian 12 packages distconv builds with, skipping those already
# there (apt-get update runs once, only if something is missing). Sourced by
# tests/run.sh and examples/demo.sh; as non-root it prints what to install.
#   third_party/install_packages.sh
set -euo pipefail

packages=(bazel-bootstrap libopenmpi-dev openmpi-bin libdnnl-dev googletest
          libgtest-dev libbenchmark-dev libhdf5-openmpi-dev python3-h5py
          python3-numpy python3-dev pybind11-dev python3-torch python3-mpi4py
          cmake pkg-config clang libclang-rt-14-dev iproute2)
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  if ((EUID != 0)); then
    echo "distconv: missing packages; as root run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
