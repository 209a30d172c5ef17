#!/bin/bash
# Every program given prints its options on --help (a "usage:" line and
# the --help option itself) and exits 0, on one rank and on two (where
# rank 0 alone prints); a program after --serial runs once, without
# mpirun (it does not use MPI).
#   help_test.sh [--serial] PROGRAM...
set -uo pipefail
source tests/mpi_env.sh
failed=0
serial=0
for program in "$@"; do
  if [[ $program == --serial ]]; then
    serial=1
    continue
  fi
  for ranks in 1 2; do
    if ((serial)); then
      ((ranks == 1)) || continue
      out=$(timeout 60 "$program" --help 2>&1)
    else
      out=$(timeout 60 mpirun --allow-run-as-root --oversubscribe \
        --bind-to none -np "$ranks" "$program" --help 2>&1)
    fi
    rc=$?
    usages=$(grep -c "^usage:" <<<"$out")
    if ((rc != 0 || usages != 1)) || ! grep -q -- "--help" <<<"$out"; then
      echo "FAILED: $(basename "$program") --help on $ranks ranks exited" \
        "$rc with $usages usage lines:"
      head -5 <<<"$out"
      failed=1
    fi
  done
  ((failed == 0)) && echo "ok: $(basename "$program") --help"
  serial=0
done
exit $failed
