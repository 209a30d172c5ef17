#!/bin/bash
# Runs every libFuzzer target (tests/fuzz.bzl) for a bounded time, starting
# from its corpus in the repository, and fails on any finding (a property
# that fails, a crash, a sanitizer report, a leak). Builds with
# --config=fuzz (clang) in an output base of its own, so the default
# build's cache is kept. New inputs go to a scratch directory, not into
# the repository; a finding's input is printed, to be added to the target's
# corpus (testdata/fuzz/<target>/) as a regression test once fixed. The
# targets run as many at once as there are cores.
#   tests/fuzz.sh [SECONDS]   per target (default 30)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-30}"
# The targets that read files through MPI-IO run Open MPI in one process
# (a singleton): its environment, and LeakSanitizer's suppressions of
# Open MPI's own allocations kept past MPI_Finalize (tests/lsan.supp).
source tests/mpi_env.sh
# ... and HDF5's on damaged files (tests/fuzz_lsan.supp says why).
# Where LeakSanitizer's own tracer crashes in the leak check at exit (a
# fatal error of the sanitizer, not a leak report: seen on some kernels),
# that target is fuzzed again without the leak check and the summary says
# so; any other failure of the rerun still fails.
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

# fuzz BINARY WORK: one target for $seconds s from its corpus, the log in
# WORK/log, findings in WORK/findings.
fuzz() {
  "$1" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$2/findings/" "$2/corpus" \
    "$package/testdata/fuzz/$name" > "$2/log" 2>&1
}
# tracer_crashed WORK: the run ended in LeakSanitizer's tracer crash, its
# only finding the empty input.
tracer_crashed() {
  lsan_tracer_crashed "$1/log" || return 1
  local f
  for f in "$1/findings"/*; do
    [[ -e $f ]] || continue
    [[ -s $f ]] && return 1
  done
  return 0
}

# fuzz_target TARGET: fuzzes one target in $scratch/NAME, its report in
# NAME/report and its outcome (ok, no_leak_check or failed) in
# NAME/outcome.
fuzz_target() {
  local target=$1 package name work
  package=${target#//}
  package=${package%%:*}
  name=${target##*:}
  work="$scratch/$name"
  mkdir -p "$work/corpus" "$work/findings"
  {
    echo "== $target: $seconds s from $package/testdata/fuzz/$name"
    if fuzz "$bin/$package/$name" "$work"; then
      grep -E '^stat::number_of_executed_units|^stat::new_units_added|DONE' \
        "$work/log" || true
      echo ok > "$work/outcome"
    elif tracer_crashed "$work"; then
      echo "$target: LeakSanitizer's tracer crashed at exit (not a leak" \
        "report); fuzzing again without the leak check"
      rm -rf "$work/findings" && mkdir -p "$work/findings"
      if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
          fuzz "$bin/$package/$name" "$work"; then
        grep -E '^stat::number_of_executed_units|^stat::new_units_added' \
          "$work/log" || true
        echo no_leak_check > "$work/outcome"
      else
        tail -n 40 "$work/log"
        echo failed > "$work/outcome"
      fi
    else
      tail -n 40 "$work/log"
      local f
      for f in "$work/findings"/*; do
        [[ -e $f ]] || continue
        echo "finding: $f ($(wc -c < "$f") bytes):"
        od -A d -t x1 "$f" | head -n 8
      done
      echo failed > "$work/outcome"
    fi
  } > "$scratch/$name.report" 2>&1
}

# As many targets at once as there are cores (libFuzzer runs one process
# a target, one thread each); the reports printed in the targets' order.
running=0
for target in "${targets[@]}"; do
  if ((running >= $(nproc))); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_target "$target" &
  running=$((running + 1))
done
wait
failed=()
no_leak_check=()
for target in "${targets[@]}"; do
  name=${target##*:}
  cat "$scratch/$name.report"
  case $(cat "$scratch/$name/outcome" 2>/dev/null || echo failed) in
    ok) ;;
    no_leak_check) no_leak_check+=("$target") ;;
    *) failed+=("$target") ;;
  esac
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}"
  exit 1
fi
if ((${#no_leak_check[@]})); then
  echo "fuzz: without the leak check (LeakSanitizer's tracer crashed here):" \
    "${no_leak_check[*]}"
fi
echo "fuzz: no findings in ${#targets[@]} targets, $seconds s each"
