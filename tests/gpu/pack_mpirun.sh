#!/bin/bash
# The GPU pack's stand-in for tests/mpirun_test.sh (the launcher
# examples/loss_curve_test.sh calls): RANKS ranks of BINARY under the
# pack's own mpirun (device_check.sh sets its environment): each rank
# gives up after TIMEOUT_S seconds (the examples' --timeout_s), and the run
# is killed 30 s later if it is still there.
#   pack_mpirun.sh RANKS BINARY TIMEOUT_S [ARGS...]
set -u
ranks=$1 binary=$2 timeout_s=$3
shift 3
bin=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec timeout --kill-after=10 "$((timeout_s + 30))" "$bin/mpirun" \
  --allow-run-as-root -np "$ranks" -x LD_LIBRARY_PATH \
  -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path \
  "$binary" --timeout_s="$timeout_s" "$@"
