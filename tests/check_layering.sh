#!/bin/bash
# Checks that includes run only downward between the top-level folders:
#   distconv <- halo, kernels, io <- layers <- perf, examples, python
# (halo, kernels and io are one floor and do not include each other; tests/
# helpers may be included from every floor's tests). Prints each include
# that runs back up and exits 1 if there is one.
#   tests/check_layering.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
declare -A above=(
  [distconv]='halo|kernels|io|layers|perf|examples|python'
  [halo]='kernels|io|layers|perf|examples|python'
  [kernels]='halo|io|layers|perf|examples|python'
  [io]='halo|kernels|layers|perf|examples|python'
  [layers]='perf|examples|python'
)
status=0
for floor in "${!above[@]}"; do
  if grep -rnE "^#include \"(${above[$floor]})/" "$floor" \
       --include='*.h' --include='*.cc' --include='*.cu'; then
    status=1
  fi
done
if ((status)); then
  echo "layering: the includes above run from a lower folder to a higher one" >&2
else
  echo "layering: ok (no include runs back up)"
fi
exit $status
