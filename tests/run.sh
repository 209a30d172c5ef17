#!/bin/bash
# Builds and tests everything: installs missing Debian packages (as root),
# checks that includes run only downward between folders
# (check_layering.sh), then `bazel build //...` and `bazel test //...`, and
# prints "tests: N passed, M failed" (counting Bazel test targets).
#   tests/run.sh                   default build
#   tests/run.sh --config=asan     extra arguments go to both bazel commands
#   tests/run.sh -- //halo/...     target patterns after -- (default //...)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

options=()
while (($#)) && [[ $1 != -- ]]; do
  options+=("$1")
  shift
done
if (($#)); then shift; fi  # the --
targets=("$@")
((${#targets[@]})) || targets=(//...)

third_party/install_packages.sh
tests/check_layering.sh

if ! bazel build "${options[@]}" -- "${targets[@]}"; then
  echo "tests: build failed" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
bazel test "${options[@]}" -- "${targets[@]}" 2>&1 | tee "$log" || status=$?

# Result lines look like "//tests:foo_np4    (cached) PASSED in 1.2s".
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(PASSED|FLAKY)' "$log" || true)
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|REMOTE FAILURE)' "$log" || true)
skipped=$(grep -cE '^//[^ ]+ +SKIPPED' "$log" || true)
echo "tests: $passed passed, $failed failed"
# Cases a passing test skipped because this machine lacks something (a
# file system it may mount, a GPU): their SKIPPED lines, so that a skip is
# never taken for a pass.
testlogs=bazel-testlogs  # (this run's: Bazel points it at each run's)
skips=""
if [[ -d $testlogs ]]; then
  while read -r target; do
    path=${target#//}
    path="$testlogs/${path/://}/test.log"
    [[ -f $path ]] || continue
    # A script's "SKIPPED: why"; GoogleTest's "FILE:LINE: Skipped" and
    # the reason on the next line.
    found=$({ grep -E '^SKIPPED:' "$path" || true
              grep -A1 -E ': Skipped$' "$path" |
                grep -vE ': Skipped$|^--$' || true
            } | sort -u)
    if [[ -n $found ]]; then
      skips+="$target: ${found//$'\n'/; }"$'\n'
    fi
  done < <(grep -oE '^//[^ ]+ +(\(cached\) )?(PASSED|FLAKY)' "$log" |
           cut -d' ' -f1 || true)
fi
if [[ -n $skips ]]; then
  echo "cases skipped inside passing tests, and why:"
  printf '%s' "$skips" | sed 's/^/  /'
fi
((skipped == 0)) || echo "($skipped skipped: incompatible with this configuration, e.g. CUDA-only)"
if ((status != 0 || failed != 0)); then exit 1; fi
