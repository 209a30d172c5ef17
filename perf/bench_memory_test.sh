#!/bin/bash
# distconv_bench on problems larger than the memory it may use (an address
# space of 400 MB per rank, `ulimit -v`): each reports "cannot allocate"
# for the problem, the same on every rank (rank 0 in its report, the
# others on their own line), and the run goes on to the next
# problem (a small one that passes) and exits 1, within a minute, rather
# than dying of an uncaught std::bad_alloc (SIGABRT) or leaving a rank
# waiting in a collective. On 1 and 2 ranks.
#   bench_memory_test.sh BENCH
set -uo pipefail
bench=$1
source tests/mpi_env.sh
failed=0
big=mb6ic1ih1000iw1000  # 24 MB per tensor, a few hundred MB per problem
runs=(
  "1 --bnorm mb1ic20000000ih1iw1 $big mb2ic3ih8iw8"  # 20 M channels' statistics
  "2 --bnorm mb1ic20000000ih1iw1 $big mb2ic3ih8iw8"
  "1 --conv ${big}oc1kh1kw1 mb2ic3ih8iw8oc4kh3kw3ph1pw1"
  "2 --pool ${big}kh1kw1 mb2ic3ih8iw8kh3kw3ph1pw1"
)
for r in "${runs[@]}"; do
  read -ra args <<<"$r"
  np=${args[0]}
  start=$SECONDS
  out=$(ulimit -v 400000 && timeout 60 mpirun --allow-run-as-root \
    --oversubscribe --bind-to none -np "$np" "$bench" "${args[@]:1}" 2>&1)
  rc=$?
  echo "-np $r: exit $rc after $((SECONDS - start)) s"
  grep -E "ERROR|PASS|FAIL" <<<"$out"
  # Rank 0's report, and each other rank's own line (stderr).
  errors=$(grep -v "^distconv_bench (rank" <<<"$out" |
    grep -c "ERROR .*cannot allocate memory")
  others=$(grep -c "^distconv_bench (rank .*ERROR .*cannot allocate memory" \
    <<<"$out")
  wanted=$(( ${#args[@]} - 3 ))  # every problem but the last, small one
  if ((rc != 1 || errors != wanted || others != (np - 1) * wanted)) ||
     ! grep -q " PASS " <<<"$out"; then
    echo "FAILED: -np $r: wanted exit 1, $wanted \"cannot allocate\" and a PASS; got:"
    tail -n 20 <<<"$out"
    failed=1
  fi
done
((failed == 0)) && echo "bench_memory_test: each problem too large said it cannot allocate"
exit $failed
