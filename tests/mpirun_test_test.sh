#!/bin/bash
# tests/mpirun_test.sh with stand-in binaries (scripts mpirun starts): a
# run that ends in LeakSanitizer's tracer crash at exit with every test
# passed runs again without the leak check and passes, saying so; a crash
# beside a leak report, a memory error or a failed test fails with no
# second run, as does any other failure; a passing run runs once.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/mpirun_test_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

# stand_in NAME BODY: an executable script $work/NAME; it counts its runs
# in $work/NAME.runs.
stand_in() {
  cat > "$work/$1" <<SCRIPT
#!/bin/bash
echo run >> "$work/$1.runs"
$2
SCRIPT
  chmod +x "$work/$1"
}
tracer='echo "Tracer caught signal 11: addr=0x0 pc=0x0 sp=0x0"
  echo "==1==LeakSanitizer has encountered a fatal error."'
# Crashes in the leak check unless it is off.
stand_in flaky "echo 'distconv: 3 passed, 0 failed'
  if [[ \$ASAN_OPTIONS != *detect_leaks=0* ]]; then $tracer; exit 1; fi"
stand_in leak "echo 'ERROR: LeakSanitizer: detected memory leaks'; $tracer; exit 1"
stand_in failed_test "echo '[  FAILED  ] Suite.Case'
  echo 'distconv: 2 passed, 1 failed'; $tracer; exit 1"
stand_in plain_failure "echo 'distconv: 0 passed, 1 failed'; exit 1"
stand_in pass "echo 'distconv: 1 passed, 0 failed'"

# expect NAME STATUS RUNS [TEXT]: mpirun_test.sh 1 NAME exits STATUS
# (0 or non-zero) after RUNS runs, printing TEXT.
expect() {
  local name=$1 want=$2 runs=$3 text=${4:-} out status got
  out=$(bash tests/mpirun_test.sh 1 "$work/$name" 60 2>&1)
  status=$?
  got=$(wc -l < "$work/$name.runs")
  if { ((want == 0)) && ((status != 0)); } || { ((want != 0)) && ((status == 0)); } ||
     ((got != runs)) || { [[ -n $text ]] && ! grep -qF "$text" <<<"$out"; }; then
    echo "FAILED: $name: exit $status after $got runs (want $want after $runs${text:+, printing \"$text\"}):"
    echo "$out" | head -20
    failed=1
  else
    echo "ok: $name: exit $status after $got runs"
  fi
}
expect flaky 0 2 "running again without the leak check"
expect leak 1 1
expect failed_test 1 1
expect plain_failure 1 1
expect pass 0 1
exit $failed
