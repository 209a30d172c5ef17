#!/bin/bash
# The main job, for a new user on Debian 12: installs what is missing, builds,
# and runs a distributed 5-point stencil on a 2048 x 2048 periodic field over
# 1, 2 and 4 MPI ranks (halo exchange overlapped with compute), each checked
# against the serial computation. (The distributed convolution becomes the
# main job once it lands.)
#   examples/demo.sh [--size=N] [--steps=K]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
third_party/install_packages.sh
bazel build //examples:stencil_demo
binary=$(bazel info bazel-bin)/examples/stencil_demo
export OMPI_MCA_plm=isolated  # launch locally even where no ssh is installed
for ranks in 1 2 4; do
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
    "$binary" --size=2048 --steps=20 "$@"
done
