#!/usr/bin/env bash
# contrib/ansible/p2pcheck-fleet.yml for real (Debian's ansible, offline): the playbook runs against
# this machine through Ansible's local connection as three inventory hosts (localhost, node-a,
# node-b: each a live capture of this machine, as root) plus broadwell-01, whose capture is of a
# fixture tree (p2pcheck_capture_args: --root), and against two chroots through the
# community.general.chroot connection (Debian's ansible ships it): chroot-spr and chroot-acs,
# minimal trees (tests/e2e/contrib/mini_chroot.sh: sh, coreutils, python3, the binary's libraries)
# each holding one fixture machine at /machine. It installs the binary (p2pcheck_binary) on every
# host, chroots included, captures with --redact, fetches the captures (dd through the chroot for
# those) and runs `p2pcheck fleet` on the controller. Checks the fetched captures, the reports it
# wrote and what fleet says about them.
# Usage: tests/e2e/contrib/ansible_test.sh BINARY   (exit 77: ansible-playbook is not installed)
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../../build/fixtures}")
repo=$(cd "$(dirname "$0")/../../.." && pwd)
command -v ansible-playbook > /dev/null || { echo "SKIP ansible-playbook not installed (scripts/setup-deps.sh)"; exit 77; }
[ -d "$fx/intel-xeon-broadwell/root/sys" ] || { echo "ansible_test: no generated fixtures in $fx"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP the playbook captures as root: run as root"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# Two "hosts" that are chroots: the playbook reaches them only through the chroot connection, and
# they see nothing of this machine but what is put in them (a fixture machine at /machine).
for h in spr:xeon-sapphire-rapids acs:xeon-broadwell-switch-acs; do
  dir=$tmp/chroots/${h%%:*}
  bash "$repo/tests/e2e/contrib/mini_chroot.sh" "$dir" "$bin" || { echo "FAIL making the chroot $dir"; exit 1; }
  cp -al "$fx/${h#*:}/root" "$dir/machine" 2> /dev/null || { rm -rf "$dir/machine" && cp -a "$fx/${h#*:}/root" "$dir/machine"; }
done
[ ! -e "$tmp/chroots/spr/usr/bin/p2pcheck" ] && [ ! -e "$tmp/chroots/spr/usr/local/bin/p2pcheck" ] ||
  { echo "FAIL the chroot holds p2pcheck before the playbook installs it"; exit 1; }
chroot_vars="ansible_connection=community.general.chroot p2pcheck_install_path=/usr/local/bin/p2pcheck p2pcheck_remote_dir=/tmp p2pcheck_capture_args=\"--root /machine\""

cat > "$tmp/inventory" <<INV
[gpu_servers]
localhost ansible_connection=local
node-a ansible_connection=local
node-b ansible_connection=local
broadwell-01 ansible_connection=local p2pcheck_capture_args="--root $fx/intel-xeon-broadwell/root"
chroot-spr ansible_host=$tmp/chroots/spr $chroot_vars
chroot-acs ansible_host=$tmp/chroots/acs $chroot_vars

[all:vars]
ansible_python_interpreter=/usr/bin/python3
p2pcheck_become=false
p2pcheck_binary=$bin
p2pcheck_install_path=$tmp/installed/bin/p2pcheck
p2pcheck_remote_dir=$tmp/remote
INV
mkdir -p "$tmp/remote"
export ANSIBLE_HOME=$tmp/ansible ANSIBLE_LOCAL_TEMP=$tmp/ansible/tmp ANSIBLE_REMOTE_TEMP=$tmp/ansible/remote \
  ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_HOST_KEY_CHECKING=0 ANSIBLE_GATHERING=explicit
start=$(date +%s)
ansible-playbook -i "$tmp/inventory" "$repo/contrib/ansible/p2pcheck-fleet.yml" \
  -e "p2pcheck_collect_dir=$tmp/captures" -e "p2pcheck_report_dir=$tmp/report" \
  -e "p2pcheck_controller_bin=$tmp/installed/bin/p2pcheck" > "$tmp/play.log" 2>&1
rc=$?
echo "ansible-playbook exit $rc in $(($(date +%s) - start)) s"
# The failed task's own message first (the log's tail is the fleet report, which hides it).
[ "$rc" -eq 0 ] || { fail "ansible-playbook exit $rc"; grep -E -A12 "^fatal:|FAILED!" "$tmp/play.log" | head -60; tail -40 "$tmp/play.log"; }
grep -E "^(localhost|node-a|node-b|broadwell-01|chroot-spr|chroot-acs) +: " "$tmp/play.log"
echo "--- fleet.txt the playbook wrote:"; cat "$tmp/report/fleet.txt" 2> /dev/null; echo "---"

[ -x "$tmp/installed/bin/p2pcheck" ] || fail "the binary was not installed at p2pcheck_install_path"
for h in localhost node-a node-b broadwell-01; do
  [ -s "$tmp/captures/$h.tar.zst" ] || fail "no capture fetched for $h"
  [ ! -e "$tmp/remote/p2pcheck-$h.tar.zst" ] || fail "the capture of $h was left on the host"
done
for h in spr acs; do
  [ -s "$tmp/captures/chroot-$h.tar.zst" ] || fail "no capture fetched from the chroot chroot-$h"
  [ -x "$tmp/chroots/$h/usr/local/bin/p2pcheck" ] || fail "the binary was not installed inside the chroot chroot-$h"
  [ -z "$(ls "$tmp/chroots/$h/tmp" | grep p2pcheck-)" ] || fail "the capture was left in the chroot chroot-$h"
done
for f in fleet.txt fleet.xml fleet.html; do [ -s "$tmp/report/$f" ] || fail "the playbook wrote no $f"; done
xmllint --noout --nonet "$tmp/report/fleet.xml" 2> /dev/null || fail "fleet.xml does not parse"
xmllint --html --noout --nonet "$tmp/report/fleet.html" 2> /dev/null || fail "fleet.html does not parse"
grep -q "^RESULT: FAIL — 2 of 6 hosts fail" "$tmp/report/fleet.txt" || fail "fleet.txt: $(grep RESULT "$tmp/report/fleet.txt")"

"$bin" fleet --json "$tmp/captures" > "$tmp/fleet.json" 2> /dev/null
python3 - "$tmp/fleet.json" <<'PY' || failed=$((failed + 1))
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit(f"FAIL fleet --json over the fetched captures is not JSON: {e}")
hosts = {h["host"]: h for h in j["hosts"]}
problems = []
if set(hosts) != {"localhost", "node-a", "node-b", "broadwell-01", "chroot-spr", "chroot-acs"}:
    problems.append(f"hosts {sorted(hosts)}: redacted captures are named after the inventory host")
if not all(h["redacted"] is True and h["format"] == "capture" for h in hosts.values()):
    problems.append("every capture is a redacted capture")
live = [t for t in j["topologies"] if "node-a" in t["hosts"]]
if not live or set(live[0]["hosts"]) != {"localhost", "node-a", "node-b"}:
    problems.append(f"the three captures of this machine are one topology group: {live}")
if hosts.get("broadwell-01", {}).get("result") != "FAIL":
    problems.append("broadwell-01 fails")
if "broadwell-01" not in next((g["hosts"] for g in j["failures"] if g["cause"] == "pair.host_bridge"), []):
    problems.append("broadwell-01's refused pair is grouped under pair.host_bridge")
# The chroots: each its own machine, judged as its fixture is (tests/golden: PASS and FAIL by ACS).
if hosts.get("chroot-spr", {}).get("result") != "PASS":
    problems.append(f"chroot-spr (xeon-sapphire-rapids) passes: {hosts.get('chroot-spr', {}).get('result')}")
if "chroot-acs" not in next((g["hosts"] for g in j["failures"] if g["cause"] == "pair.acs_redirect"), []):
    problems.append("chroot-acs (xeon-broadwell-switch-acs) fails by ACS redirect")
if len({hosts[h]["fingerprint"] for h in ("chroot-spr", "chroot-acs", "broadwell-01", "node-a") if h in hosts}) != 4:
    problems.append("the chroots' machines are topologies of their own")
for p in problems:
    print("FAIL " + p)
print("fleet over the fetched captures: " + ", ".join(f"{n} {h['result']}" for n, h in sorted(hosts.items())))
sys.exit(1 if problems else 0)
PY
echo "ansible_test: $failed failure(s)"
[ "$failed" -eq 0 ]
