#!/usr/bin/env bash
# contrib/slurm/p2pcheck-fleet.sbatch for real (Debian's slurm-wlm): the test makes a munge key,
# starts munged, slurmctld and slurmd for a one-node cluster of this host (state, spool, logs,
# sockets and the munge key in a temporary directory; no cgroups, proctrack/linuxproc, no
# accounting), submits the script with `sbatch --wait` twice, and checks the capture srun took on
# the node, the fleet report at the end and the job's exit code, each written here: once as sites
# run it (the node captures this machine: without a GPU or an NVMe, NO PAIRS, exit 4), once with
# P2PCHECK a wrapper whose capture reads the fixture xeon-broadwell-switch-acs (FAIL, exit 1).
# Then the node's P2P view (issue 51), from contrib/slurm's Helper and HealthCheckProgram wrappers:
# the node reads a fixture tree named in $tmp/current (the Broadwell switch machine as qualified,
# booted with pci=disable_acs_redir= for its two ACS ports: a variant generated here), so
# `scontrol show node` shows the Helper's features (ActiveFeatures=p2p_partial,p2p_same_switch,
# what `p2pcheck slurm features` prints for it) and `--constraint=p2p_partial` runs; then a planted
# regression (the fixture as it is: ACS redirect back) drains the node with the reason
# "p2pcheck: ACS redirect on 0000:03:09.0 refuses pairs (not at the baseline); ...", undoing it resumes the
# node, and a corrupt baseline drains it with a reason that says it could not be read.
# Everything it started is stopped on exit.
# Usage: tests/e2e/contrib/slurm_test.sh BINARY   (exit 77: slurm-wlm or munge not installed, or not root)
set -u
bin=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../../.." && pwd)
fx=$(realpath -m "${P2PCHECK_FIXTURE_TREES:-$repo/build/fixtures}")
for tool in slurmctld slurmd sbatch munged mungekey; do
  command -v "$tool" > /dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "SKIP $tool not installed (scripts/setup-deps.sh: slurm-wlm, munge)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP slurmd runs jobs as their user only when started as root"; exit 77; }
[ -d "$fx/xeon-broadwell-switch-acs/root/sys" ] || { echo "slurm_test: no generated fixtures in $fx"; exit 1; }
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
NodeFeaturesPlugins=node_features/helpers
HealthCheckProgram=$tmp/health
HealthCheckInterval=2
HealthCheckNodeState=ANY
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=p2pcheck Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
# The node's machine: the qualified variant of the ACS fixture (its machine.toml with the two ports
# in disable_acs_redir and on its command line), and its check --json as the accepted baseline.
mkdir -p "$tmp/q/xeon-broadwell-switch-acs"
sed -e '/^iommu_domain = /a disable_acs_redir = ["0000:03:09.0", "0000:03:11.0"]' \
  -e 's/ intel_iommu=on"$/ intel_iommu=on pci=disable_acs_redir=0000:03:09.0;0000:03:11.0"/' \
  "$repo/fixtures/xeon-broadwell-switch-acs/machine.toml" > "$tmp/q/xeon-broadwell-switch-acs/machine.toml"
python3 "$repo/tools/mkfixture.py" --out "$tmp/gen" "$tmp/q/xeon-broadwell-switch-acs/machine.toml" > /dev/null ||
  { fail "mkfixture of the qualified variant"; exit 1; }
qualified=$tmp/gen/xeon-broadwell-switch-acs/root
"$bin" --root "$qualified" check --json > "$tmp/baseline.json"
echo "$qualified" > "$tmp/current"
# contrib/slurm's wrappers as a site installs them, their settings in a file of their own; slurmd
# gives a HealthCheckProgram only SLURMD_NODENAME, so scontrol is told this cluster's config here.
cat > "$tmp/p2pcheck-slurm" <<SETTINGS
P2PCHECK=$bin
P2PCHECK_ARGS="--root \$(cat $tmp/current)"
P2PCHECK_BASELINE=$tmp/baseline.json
SETTINGS
for kind in features health; do
  printf '#!/bin/sh\nexport P2PCHECK_SLURM_CONF=%s SLURM_CONF=%s\nexec %s "$@"\n' "$tmp/p2pcheck-slurm" "$SLURM_CONF" \
    "$repo/contrib/slurm/p2pcheck-node-$kind" > "$tmp/$kind"
  chmod 755 "$tmp/$kind"
done
for feature in p2p_gpu_nvme p2p_partial p2p_none p2p_unknown p2p_same_switch; do
  echo "Feature=$feature Helper=$tmp/features"
done > "$tmp/helpers.conf"
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

crashed='==[0-9]+==ERROR: [A-Za-z]+Sanitizer|^SUMMARY: [A-Za-z]+Sanitizer|: runtime error: '
# job NAME P2PCHECK WANT_RC WANT_RESULT LINE...: submits the script (its files in $tmp/NAME) and
# checks that the job exits WANT_RC (fleet's code, passed on), says so and shows each LINE (an
# extended regex of a whole line of its output), that srun left the node's capture, the reports
# exist and parse, and that fleet --json over the captures says WANT_RESULT of the one host, redacted.
job() {
  local name=$1 cmd=$2 want=$3 result=$4 dir=$tmp/$1 start line rc; shift 4
  mkdir -p "$dir"; start=$(date +%s)
  (cd "$dir" && P2PCHECK=$cmd P2PCHECK_FLEET_DIR=$dir/fleet \
    timeout 180 sbatch --wait -N 1 --output="$dir/job.out" "$repo/contrib/slurm/p2pcheck-fleet.sbatch") > "$dir/sbatch.out" 2>&1
  rc=$?
  echo "$name: sbatch --wait exit $rc in $(($(date +%s) - start)) s: $(head -1 "$dir/sbatch.out")"
  echo "--- the job's output ($dir/job.out):"; cat "$dir/job.out" 2> /dev/null; echo "---"
  [ "$rc" -eq "$want" ] || fail "$name: sbatch --wait exit $rc, wanted $want (fleet's exit code, which the job passes on)"
  ! grep -qE -- "$crashed" "$dir/job.out" || fail "$name: a sanitizer report in the job's output"
  grep -qx "p2pcheck-fleet: report in $dir/fleet (fleet.txt, fleet.xml, fleet.html); fleet exit $want" "$dir/job.out" ||
    fail "$name: the job output lacks 'p2pcheck-fleet: report in $dir/fleet (...); fleet exit $want'"
  for line; do grep -qxE -- "$line" "$dir/job.out" || fail "$name: the job's output lacks a line /^$line\$/"; done
  [ -s "$dir/fleet/captures/$node.tar.zst" ] || { fail "$name: srun left no capture for $node"; logs; }
  for f in fleet.txt fleet.xml fleet.html; do [ -s "$dir/fleet/$f" ] || fail "$name: the job wrote no $f"; done
  xmllint --noout --nonet "$dir/fleet/fleet.xml" 2> /dev/null || fail "$name: fleet.xml does not parse"
  "$bin" fleet --json "$dir/fleet/captures" > "$dir/fleet.json" 2> "$dir/fleet.err"; rc=$?
  [ "$rc" -eq "$want" ] || fail "$name: fleet --json over the job's captures exit $rc, wanted $want"
  python3 - "$dir/fleet.json" "$node" "$result" "$name" <<'PY' || failed=$((failed + 1))
import json, sys
path, node, result, name = sys.argv[1:]
try:
    j = json.load(open(path))
except ValueError as e:
    sys.exit(f"FAIL {name}: fleet --json over the job's captures is not JSON: {e}")
hosts = [(h["host"], h["result"], h["redacted"]) for h in j["hosts"]]
ok = hosts == [(node, result, True)] and j["result"] == result and j["summary"]["unreadable"] == 0
print(("" if ok else "FAIL ") + f"{name}: fleet over the job's captures: hosts {hosts}, result {j['result']}"
      + ("" if ok else f"; wanted [({node!r}, {result!r}, True)], result {result}"))
sys.exit(0 if ok else 1)
PY
}

# As sites run it: the node captures this machine. The expectation is written from what sysfs shows,
# not asked of p2pcheck: without an AMD or NVIDIA GPU (display 0x03, accelerator 0x12) or without an
# NVMe (0x010802) fleet ends NO PAIRS, exit 4, which the job passes on. A GPU server with an NVMe
# has a verdict of its own that this test cannot know: there only the fixture's job is checked.
gpus=0; nvmes=0
for d in /sys/bus/pci/devices/*; do
  case $(cat "$d/vendor" 2> /dev/null):$(cat "$d/class" 2> /dev/null) in
    0x1002:0x03* | 0x10de:0x03* | 0x1002:0x12* | 0x10de:0x12*) gpus=$((gpus + 1)) ;;
    *:0x010802) nvmes=$((nvmes + 1)) ;;
  esac
done
if [ "$gpus" -eq 0 ] || [ "$nvmes" -eq 0 ]; then
  job live "$bin" 4 "NO PAIRS" "RESULT: NO PAIRS — 1 of 1 host has no GPU–NVMe pair" \
    "  $node +NO PAIRS +0/0/0 +[0-9]+ +[0-9]+ +T1 .*"
else
  echo "note: this node has $gpus GPU(s) and $nvmes NVMe: its verdict is its own, so only the fixture's job below is checked"
fi

# A node whose capture is a fixture machine (P2PCHECK: capture reads its tree; fleet runs as it is):
# xeon-broadwell-switch-acs fails (ACS redirect on two switch ports, a host bridge off the
# allowlist, no AIS), so fleet ends FAIL, exit 1, with that host's row and the ACS fix.
wrapper=$tmp/p2pcheck-xeon-broadwell-switch-acs
cat > "$wrapper" <<WRAP
#!/bin/sh
[ "\$1" = capture ] && exec "$bin" --root "$fx/xeon-broadwell-switch-acs/root" "\$@"
exec "$bin" "\$@"
WRAP
chmod 755 "$wrapper"
job fixture "$wrapper" 1 FAIL "RESULT: FAIL — 1 of 1 host fails" \
  "wrote $tmp/fixture/fleet/captures/$node\\.tar\\.zst: [0-9]+ files, [0-9]+ links, .* from tree $fx/xeon-broadwell-switch-acs/root, redacted" \
  "  $node +FAIL +1/5/0 +2 +3 +T1 +F1 .* +gpu\\.ais, pair\\.acs_redirect, pair\\.host_bridge" \
  "    fix    boot with pci=disable_acs_redir=0000:03:09\\.0;0000:03:11\\.0"

# ---- the node's P2P features and health (issue 51) -----------------------------------------------
want=$("$bin" --root "$qualified" slurm features | paste -sd, -)
[ "$want" = p2p_partial,p2p_same_switch ] || fail "p2pcheck slurm features of the qualified node: '$want'"
shown=$(scontrol show node "$node")
echo "$shown" | grep -E '^ +(Available|Active)Features='
echo "$shown" | grep -qx "   ActiveFeatures=$want" || fail "scontrol show node: ActiveFeatures is not $want"
echo "$shown" | grep -qx "   AvailableFeatures=p2p_gpu_nvme,p2p_partial,p2p_none,p2p_unknown,p2p_same_switch" ||
  fail "scontrol show node: AvailableFeatures is not the five of helpers.conf"
"$tmp/features" p2p_gpu_nvme > "$tmp/switch.out" 2>&1 && fail "the Helper switched a feature on: $(cat "$tmp/switch.out")"
(cd "$tmp" && timeout 60 sbatch --wait --constraint=p2p_partial -o "$tmp/constraint.out" --wrap='echo ran') > /dev/null 2>&1 ||
  fail "a job with --constraint=p2p_partial did not run"
grep -qx ran "$tmp/constraint.out" 2> /dev/null || fail "the --constraint=p2p_partial job left no output"

# node_state WANT REGEX: waits up to 30 s (the health check runs every 2 s) for `scontrol show node
# -o` to match; prints the State and Reason it ended with.
node_state() {
  local what=$1 re=$2 line
  for _ in $(seq 60); do
    line=$(scontrol show node -o "$node")
    [[ $line =~ $re ]] && break
    sleep 0.5
  done
  echo "$what: $(grep -oE 'State=[^ ]+' <<< "$line")$(grep -oE ' Reason=.*' <<< "$line")"
  [[ $line =~ $re ]] || { fail "$what: the node's line does not match /$re/"; tail -5 "$tmp/log/slurmd.log"; }
}
node_state "qualified" 'State=IDLE '
echo "$fx/xeon-broadwell-switch-acs/root" > "$tmp/current"
node_state "ACS redirect back" 'State=[A-Z+]*DRAIN.* Reason=p2pcheck: ACS redirect on 0000:03:09\.0 refuses pairs \(not at the baseline\); ACS redirect on 0000:03:11\.0 refuses pairs \(not at the baseline\); 0000:0[45]:00\.0 <-> nvme[0-9] now refused \(pair\.acs_redirect\)'
echo "$qualified" > "$tmp/current"
node_state "fixed" 'State=IDLE '
cp "$tmp/baseline.json" "$tmp/baseline.good"
echo '{"schema": "p2pcheck.check", "schema_version": 2, "res' > "$tmp/baseline.json"
node_state "corrupt baseline" "State=[A-Z+]*DRAIN.* Reason=p2pcheck: cannot judge the node: cannot read the baseline $tmp/baseline.json: "
mv "$tmp/baseline.good" "$tmp/baseline.json"
node_state "baseline restored" 'State=IDLE '
echo "slurm_test: $failed failure(s)"
[ "$failed" -eq 0 ]
