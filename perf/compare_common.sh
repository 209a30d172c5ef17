# The parts the side-by-side comparison scripts share (sourced by
# perf/compare_onednn.sh and perf/compare_precision.sh; not run alone):
#   compare_setup          builds distconv_bench, sets $bench and the
#                          mpirun prefix ${mpi[@]}, prints the CPU line
#   round_order R N        the order of N configurations in round R:
#                          rotated a place per round, every other round
#                          reversed, so no configuration always runs last
#   record CFG R LINE      keeps the bench's median_ms of a JSON LINE in t
#   m CFG                  the median over the rounds of CFG's times
#   paired A B             the median over the rounds of A's time / B's in
#                          the same round (nan where no round ran both)
#   field NAME, median, ratio A B
# The caller declares the associative array t and sets $rounds.

field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }

compare_setup() {
  bazel build //perf:distconv_bench >&2
  bench=$(bazel info bazel-bin 2>/dev/null)/perf/distconv_bench
  export OMPI_MCA_plm=isolated
  mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(nproc) cores; $(grep -o -w 'avx2\|avx512[a-z_0-9]*\|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')"
}

round_order() {
  local r=$1 n=$2 k j
  for ((k = 0; k < n; k++)); do
    j=$(((k + r - 1) % n))
    [ $((r % 2)) -eq 0 ] && j=$((n - 1 - j))
    echo "$j"
  done
}

record() {
  local ms
  ms=$(echo "$3" | field median_ms)
  t[$1]+="$ms "
  t[${1}_round$2]=$ms
}

m() { echo "${t[$1]:-}" | tr ' ' '\n' | grep . | median; }

paired() {
  local v r a b
  v=$(
    for ((r = 1; r <= rounds; r++)); do
      a=${t[${1}_round$r]:-} b=${t[${2}_round$r]:-}
      [ -n "$a" ] && [ -n "$b" ] && ratio "$a" "$b"
    done | median)
  echo "${v:-nan}"
}
