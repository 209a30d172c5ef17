#!/bin/bash
# The examples' --profile and --help: a profiled run trains the same loss
# curve as an unprofiled one, prints the table and writes JSON that
# perf/plot_profile.py reads, with a row for every convolution pass; --help
# lists the options with their defaults and exits 0; --profile with
# --device=gpu and an unwritable --profile-json exit 2 saying why.
#   profile_option_test.sh SEGMENTATION COSMOFLOW PLOT_PROFILE
set -uo pipefail
source tests/mpi_env.sh
failed=0
fail() { echo "FAILED: $*"; failed=1; }
run() {  # run RANKS BINARY ARGS...: sets out and rc
  local ranks=$1 binary=$2
  shift 2
  out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np "$ranks" "$binary" "$@" 2>&1)
  rc=$?
}
losses() { grep -o "loss [0-9][0-9.]*" <<<"$1"; }
dir=${TEST_TMPDIR:-$(mktemp -d)}
for binary in "$1" "$2"; do
  name=$(basename "$binary")
  run 2 "$binary" --size=16 --steps=3
  plain=$out
  run 2 "$binary" --size=16 --steps=3 --profile-json="$dir/$name.json"
  ((rc == 0)) || fail "$name --profile exited $rc: $(tail -3 <<<"$out")"
  [[ "$(losses "$plain")" == "$(losses "$out")" ]] ||
    fail "$name: the losses differ with --profile"
  grep -q "^step .*the slowest of 2 ranks, 2 steps" <<<"$out" ||
    fail "$name: no profile table: $(tail -3 <<<"$out")"
  md=$(python3 "$3" "$dir/$name.json" "$dir/$name") ||
    fail "$name: plot_profile.py failed"
  for pass in forward backward-data backward-weights; do
    grep -q "\.conv | $pass |" <<<"$md" ||
      fail "$name: no convolution $pass row in: $md"
  done
  [[ -s "$dir/$name/profile.md" ]] || fail "$name: no profile.md"
  run 1 "$binary" --help
  ((rc == 0)) && grep -q -- "--steps=10" <<<"$out" &&
    grep -q -- "--size=" <<<"$out" ||
    fail "$name --help exited $rc: $(head -3 <<<"$out")"
  run 2 "$binary" --size=16 --steps=1 --profile --device=gpu
  ((rc == 2)) && grep -q "profile times layers in host memory" <<<"$out" ||
    fail "$name --profile --device=gpu exited $rc: $(tail -2 <<<"$out")"
  run 2 "$binary" --size=16 --steps=1 --profile-json=/nonexistent/dir/p.json
  ((rc == 2)) && grep -q "cannot write /nonexistent" <<<"$out" ||
    fail "$name unwritable --profile-json exited $rc: $(tail -2 <<<"$out")"
done
((failed == 0)) && echo "ok: --profile and --help"
exit $failed
