#!/bin/bash
# Random differential testing at length: builds tests/random_chain_test.cc
# and runs it under mpirun on each rank count, each chain against the same
# chain on one process (fp64, 1e-10).
#   tests/random_chains.sh [--cases=N] [--seed=S] [--ranks=R]
# --cases: chains per rank count (default 1000); --seed: the first seed
# (default 1); --ranks: one rank count (default 2 to 8). A failing chain
# prints its description and the command that replays it, e.g.
#   tests/random_chains.sh --ranks=6 --seed=4711 --cases=1
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cases=1000 seed=1 ranks="2 3 4 5 6 7 8"
for arg in "$@"; do
  case "$arg" in
    --cases=*) cases="${arg#--cases=}" ;;
    --seed=*) seed="${arg#--seed=}" ;;
    --ranks=*) ranks="${arg#--ranks=}" ;;
    *) echo "usage: tests/random_chains.sh [--cases=N] [--seed=S]" \
         "[--ranks=R]" >&2
       exit 2 ;;
  esac
done
bazel build //tests:random_chain_test_bin
source tests/mpi_env.sh
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for n in $ranks; do
  echo "random chains: $cases on $n ranks from seed $seed"
  start=$SECONDS
  # A deadlock fails after an hour per rank count at most.
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" \
    --mca mpi_yield_when_idle 1 bazel-bin/tests/random_chain_test_bin \
    --timeout_s=3600 --cases="$cases" --seed="$seed" \
    --gtest_brief=1 > "$log" 2>&1 || status=1
  ((status)) && grep '^\[ chain' "$log" | tail -1  # the chain that failed
  grep -v '^\[ chain' "$log" || true
  echo "random chains: $n ranks took $((SECONDS - start)) s"
done
exit "$status"
