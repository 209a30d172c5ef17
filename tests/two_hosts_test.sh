#!/bin/bash
# Ranks on two network hosts: two Linux network namespaces joined by a veth
# pair (10.77.0.1 and 10.77.0.2), each with a host name of its own (a UTS
# namespace), and Open MPI launched across them over TCP by a launch agent
# that enters the host's namespaces (what ssh does on a cluster). The
# library then sees two nodes: its shared-memory window joins only the
# ranks of one host, and messages between the hosts cross TCP.
#   two_hosts_test.sh SHARED_INBOX_TEST HALO_TEST CONV_TEST SEGMENTATION
# Runs, each checked against one rank or the serial reference:
#  - the shared-inbox test (the job spans exactly two hosts, memory is
#    shared exactly within each),
#  - the halo exchange test and the convolution test on 4 ranks (2 per
#    host),
#  - the segmentation example's loss curve on 1 rank, 2 ranks (one per
#    host) and 4 ranks (2 per host) against each other.
# Skips, saying so, where namespaces cannot be made (not root, no iproute2,
# a container without the capability). Runs from the runfiles root.
set -u
shared_inbox_test="$1" halo_test="$2" conv_test="$3" segmentation="$4"

skip() {
  echo "SKIPPED: the two-host test needs $* (nothing was run)"
  exit 0
}
((EUID == 0)) || skip "root, to create network namespaces"
command -v ip > /dev/null || skip "iproute2's ip"
command -v unshare > /dev/null || skip "util-linux's unshare"

dir="${TEST_TMPDIR:-$(mktemp -d)}"
tag="dc$$"  # namespaces and links of this run only
hosts=("${tag}h0" "${tag}h1")
cleanup() {
  for ns in "${hosts[@]}"; do ip netns del "$ns" 2> /dev/null; done
}
trap cleanup EXIT
ip netns add "${hosts[0]}" 2> /dev/null && ip netns add "${hosts[1]}" ||
  skip "permission to create network namespaces (ip netns add failed)"
ip link add "${tag}a" type veth peer name "${tag}b" ||
  skip "permission to create a veth pair"
for i in 0 1; do
  link="${tag}$([[ $i == 0 ]] && echo a || echo b)"
  ip link set "$link" netns "${hosts[i]}"
  ip -n "${hosts[i]}" addr add "10.77.0.$((i + 1))/24" dev "$link"
  ip -n "${hosts[i]}" link set lo up
  ip -n "${hosts[i]}" link set "$link" up
done

# The launch agent Open MPI calls as `agent HOST COMMAND...` (like ssh):
# runs the command in that host's namespaces under its host name.
cat > "$dir/agent.sh" << EOF
#!/bin/sh
case "\$1" in
  10.77.0.1) ns=${hosts[0]} name=distconv-host0 ;;
  10.77.0.2) ns=${hosts[1]} name=distconv-host1 ;;
  *) echo "agent: unknown host \$1" >&2; exit 1 ;;
esac
shift
exec ip netns exec "\$ns" unshare --uts /bin/sh -c "hostname \$name; \$*"
EOF
# mpirun_test.sh's interface (NUM_RANKS BINARY TIMEOUT_S ARGS...): the
# ranks filled host by host, half on each (rounded up); mpirun itself on
# the first host.
cat > "$dir/mpirun_two_hosts.sh" << EOF
#!/bin/bash
ranks="\$1" binary="\$2" timeout_s="\$3"
shift 3
source tests/mpi_env.sh
per_host=\$(((ranks + 1) / 2))
timeout --kill-after=10 "\$((timeout_s + 30))" \\
  ip netns exec ${hosts[0]} unshare --uts /bin/sh -c \\
  'hostname distconv-host0 && exec "\$@"' sh \\
  mpirun --allow-run-as-root --oversubscribe --bind-to none \\
  --mca mpi_yield_when_idle 1 --mca plm rsh \\
  --mca plm_rsh_agent "$dir/agent.sh" --mca btl tcp,vader,self \\
  --mca btl_tcp_if_include 10.77.0.0/24 \\
  --mca oob_tcp_if_include 10.77.0.0/24 \\
  -H "10.77.0.1:\$per_host,10.77.0.2:\$per_host" -np "\$ranks" \\
  -x OMP_NUM_THREADS -x ASAN_OPTIONS -x LSAN_OPTIONS \\
  "\$binary" --timeout_s="\$timeout_s" "\$@"
EOF
chmod +x "$dir/agent.sh" "$dir/mpirun_two_hosts.sh"
launch="$dir/mpirun_two_hosts.sh"

status=0
run() {  # run NAME COMMAND...: runs and times one check
  local name=$1 start=$SECONDS
  shift
  echo "== two hosts: $name"
  if "$@"; then
    echo "== two hosts: $name passed ($((SECONDS - start)) s)"
  else
    echo "== two hosts: $name FAILED ($((SECONDS - start)) s)"
    status=1
  fi
}
run "shared memory within each host, 2 ranks" \
  "$launch" 2 "$shared_inbox_test" 120 --hosts=2
run "shared memory within each host, 4 ranks" \
  "$launch" 4 "$shared_inbox_test" 120 --hosts=2
run "halo exchange, 4 ranks" "$launch" 4 "$halo_test" 300
run "convolution, 4 ranks" "$launch" 4 "$conv_test" 300
run "segmentation loss curve, 1, 2 and 4 ranks" \
  env MPIRUN_TEST="$launch" examples/loss_curve_test.sh "$segmentation" \
  300 1e-5 "--size=32 --samples=2 --channels=5 --width=8 --steps=3 \
--lr=0.05 --machine=perf/machines/this_machine.txt" \
  1:1x1x1x1 2:1x1x2x1 4:2x1x2x1
exit "$status"
