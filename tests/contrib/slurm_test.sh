#!/usr/bin/env bash
# contrib/slurm/p2pcheck-fleet.sbatch for real (Debian's slurm-wlm): the test makes a munge key,
# starts munged, slurmctld and slurmd for a one-node cluster of this host (state, spool, logs,
# sockets and the munge key in a temporary directory; no cgroups, proctrack/linuxproc, no
# accounting), submits the script with `sbatch --wait`, and checks the capture srun took on the
# node and the fleet report at the end. Everything it started is stopped on exit.
# Usage: tests/contrib/slurm_test.sh BINARY   (exit 77: slurm-wlm or munge not installed, or not root)
set -u
bin=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
for tool in slurmctld slurmd sbatch munged mungekey; do
  command -v "$tool" > /dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "SKIP $tool not installed (scripts/setup-deps.sh: slurm-wlm, munge)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP slurmd runs jobs as their user only when started as root"; exit 77; }
PATH=$PATH:/usr/sbin
tmp=$(mktemp -d /tmp/p2pcheck-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null
  done
  rm -rf "$tmp"
}
trap stop EXIT
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
logs() { for f in "$tmp"/log/*.log; do echo "--- $f"; tail -20 "$f"; done; }

# Free ports for slurmctld and slurmd, so a busy machine (or a second run) does not collide.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
node=$(hostname -s)
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/run" "$tmp/job"
chmod 700 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" || { fail "mungekey"; exit 1; }
munged --foreground --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed" \
  > "$tmp/log/munged.out" 2>&1 &
pids+=($!)

cat > "$tmp/slurm.conf" <<CONF
ClusterName=p2pcheck-test
SlurmctldHost=$node
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=p2pcheck Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
for _ in $(seq 50); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" > "$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" > "$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 120); do
  state=$(sinfo -h -N -o %T 2> /dev/null | head -1)
  case $state in idle*) ready=1; break ;; esac
  sleep 0.5
done
[ "$ready" -eq 1 ] || { fail "the node did not become idle (state '${state:-none}')"; logs; exit 1; }
echo "slurm: one-node cluster on $node up (slurmctld :$ctld_port, slurmd :$slurmd_port)"

start=$(date +%s)
(cd "$tmp/job" && P2PCHECK=$bin P2PCHECK_FLEET_DIR=$tmp/job/fleet \
  timeout 180 sbatch --wait -N 1 --output="$tmp/job/job.out" "$repo/contrib/slurm/p2pcheck-fleet.sbatch") > "$tmp/sbatch.out" 2>&1
rc=$?
echo "sbatch --wait exit $rc in $(($(date +%s) - start)) s: $(head -1 "$tmp/sbatch.out")"
echo "--- the job's output ($tmp/job/job.out):"; cat "$tmp/job/job.out" 2> /dev/null; echo "---"
# This builder has no GPU: the live capture has no GPU-NVMe pair, so fleet ends NO PAIRS (exit 4)
# and the job with it; on a GPU server it is 0, 1 or 2.
want=$("$bin" check --quiet > /dev/null 2>&1; echo $?)
[ "$rc" -eq "$want" ] || fail "sbatch --wait exit $rc; fleet over this machine should exit $want"
[ -s "$tmp/job/fleet/captures/$node.tar.zst" ] || { fail "srun left no capture for $node"; logs; }
for f in fleet.txt fleet.xml fleet.html; do [ -s "$tmp/job/fleet/$f" ] || fail "the job wrote no $f"; done
grep -q "^p2pcheck-fleet: report in $tmp/job/fleet" "$tmp/job/job.out" || fail "the job output names the report"
"$bin" fleet --json "$tmp/job/fleet/captures" > "$tmp/fleet.json" 2> /dev/null
python3 - "$tmp/fleet.json" "$node" <<'PY' || failed=$((failed + 1))
import json, sys
try:
    j, node = json.load(open(sys.argv[1])), sys.argv[2]
except ValueError as e:
    sys.exit(f"FAIL fleet --json over the job's captures is not JSON: {e}")
hosts = [h["host"] for h in j["hosts"]]
ok = hosts == [node] and j["hosts"][0]["redacted"] is True and j["summary"]["unreadable"] == 0
print(("" if ok else "FAIL ") + f"fleet over the job's captures: hosts {hosts}, result {j['result']}")
sys.exit(0 if ok else 1)
PY
xmllint --noout --nonet "$tmp/job/fleet/fleet.xml" 2> /dev/null || fail "fleet.xml does not parse"
echo "slurm_test: $failed failure(s)"
[ "$failed" -eq 0 ]
