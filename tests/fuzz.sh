#!/bin/bash
# Runs every libFuzzer target (tests/fuzz.bzl) for a bounded time, starting
# from its corpus in the repository, and fails on any finding (a property
# that fails, a crash, a sanitizer report, a leak). Builds with
# --config=fuzz (clang) in an output base of its own, so the default
# build's cache is kept. New inputs go to a scratch directory, not into
# the repository; a finding's input is printed, to be added to the target's
# corpus (testdata/fuzz/<target>/) as a regression test once fixed.
#   tests/fuzz.sh [SECONDS]   per target (default 30)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-30}"
# The targets that read files through MPI-IO run Open MPI in one process
# (a singleton): its environment, and LeakSanitizer's suppressions of
# Open MPI's own allocations kept past MPI_Finalize (tests/lsan.supp).
source tests/mpi_env.sh
# ... and HDF5's on damaged files (tests/fuzz_lsan.supp says why).
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz_lsan.supp:print_suppressions=0"
targets=(//halo:halo_plan_fuzz //io:npy_header_fuzz //perf:conv_problem_fuzz
  //io:checkpoint_fuzz //io:h5_read_fuzz)
# One output base per checkout, beside Bazel's own.
fuzz_base="$HOME/.cache/distconv-fuzz/$(pwd | md5sum | cut -c1-12)"
fuzz_bazel=(bazel "--output_base=$fuzz_base")

# No convenience symlinks: bazel-bin and the rest stay the default build's.
"${fuzz_bazel[@]}" build --config=fuzz --symlink_prefix=/ "${targets[@]}"
bin=$("${fuzz_bazel[@]}" info --config=fuzz bazel-bin 2>/dev/null)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; "${fuzz_bazel[@]}" shutdown' EXIT

failed=()
for target in "${targets[@]}"; do
  package=${target#//}
  package=${package%%:*}
  name=${target##*:}
  work="$scratch/$name"
  mkdir -p "$work/corpus" "$work/findings"
  echo "== $target: $seconds s from $package/testdata/fuzz/$name"
  if "$bin/$package/$name" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$work/findings/" "$work/corpus" \
      "$package/testdata/fuzz/$name" > "$work/log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::new_units_added|DONE' \
      "$work/log" || true
  else
    tail -n 40 "$work/log"
    for f in "$work/findings"/*; do
      [[ -e $f ]] || continue
      echo "finding: $f ($(wc -c < "$f") bytes):"
      od -A d -t x1 "$f" | head -n 8
    done
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}"
  exit 1
fi
echo "fuzz: no findings in ${#targets[@]} targets, $seconds s each"
