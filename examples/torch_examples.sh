#!/bin/bash
# Trains one of the PyTorch examples (deeplab, unet3d, torch_segmentation)
# from distconv.nn on RANKS ranks and from torch.nn on one process with
# RANKS threads, one after the other, and prints both runs' images/s:
# installs what is missing and builds the extension module first.
#   examples/torch_examples.sh NAME [RANKS] [EXAMPLE ARGS...]
#   examples/torch_examples.sh deeplab 2 --grid=1x1x2x1
# The example's options: /usr/bin/python3 examples/NAME.py --help.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name="${1:?usage: examples/torch_examples.sh NAME [RANKS] [ARGS...]}"
ranks="${2:-2}"
shift $(( $# >= 2 ? 2 : 1 ))
script="examples/$name.py"
[[ -f $script ]] || { echo "no example $script" >&2; exit 2; }

third_party/install_packages.sh
bazel build //python:distconv
export PYTHONPATH="$PWD/python:$(bazel info bazel-bin)/python:$PWD/examples"
export OMPI_MCA_plm=isolated  # launch locally even where no ssh is installed

echo "== distconv.nn on $ranks ranks"
mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
  -x OMP_NUM_THREADS=1 -x PYTHONPATH /usr/bin/python3 -W ignore "$script" "$@"
echo "== torch.nn on one process, $ranks threads"
/usr/bin/python3 -W ignore "$script" --reference --threads="$ranks" "$@"
