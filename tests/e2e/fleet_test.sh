#!/usr/bin/env bash
# p2pcheck fleet over a corpus made here from the fixtures and the lab: a capture of every fixture
# tree, redacted captures of the 8-GPU EPYC under other names (one topology group), lspci / lspci -k
# bundle / udev / hwloc imports made with the real tools, every QEMU lab capture, saved check --json
# files, and inputs it cannot read. Checks the counts, the grouping by cause and by topology, that a
# saved check --json says what its capture says, the JSON envelope and its documented fields, the
# JUnit (parsed), the CSV (parsed), the HTML (parsed by libxml2's xmllint), the exit code, progress
# on stderr, and that -j1 and -j2 give the same bytes.
# Usage: tests/e2e/fleet_test.sh BINARY [TREES]   (TREES as in tests/e2e/golden.sh; default build/fixtures)
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD
[ -d "$fx/epyc-mi300x-8gpu/root/sys" ] || { echo "fleet_test: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0 checks=0
check() {  # check WHAT CONDITION-COMMAND...
  local what=$1; shift
  checks=$((checks + 1))
  if ! "$@"; then echo "FAIL $what"; failed=$((failed + 1)); fi
}

c=$tmp/corpus
mkdir -p "$c/rack1" "$c/rack2" "$c/imports/broadwell-bundle" "$c/lab" "$c/saved" "$c/bad"
for dir in "$fx"/*/; do
  name=$(basename "$dir")
  [ -d "$dir/root/sys" ] || continue
  "$bin" --root "$dir/root" capture -o "$c/rack1/$name.tar.zst" > /dev/null || echo "FAIL capture of $name"
done
# The same server three more times, redacted (their manifests say host-0001: the file names count).
for n in 1 2 3; do
  "$bin" --root "$fx/epyc-mi300x-8gpu/root" capture --redact -o "$c/rack2/epyc-r$n.tar.zst" > /dev/null
done
spr=$fx/xeon-sapphire-rapids/root bdw=$fx/intel-xeon-broadwell/root
lspci -A linux-sysfs -O "sysfs.path=$spr/sys/bus/pci" -xxxx > "$c/imports/spr-lspci.txt" 2> /dev/null
lspci -A linux-sysfs -O "sysfs.path=$bdw/sys/bus/pci" -k -xxxx > "$c/imports/broadwell-bundle/lspci-xxxx.txt" 2> /dev/null
cp "$bdw/proc/cpuinfo" "$c/imports/broadwell-bundle/cpuinfo"
python3 tests/e2e/imports/fixture_udev.py "$fx/xeon-broadwell-switch-acs/root" > "$c/imports/acs-udev.txt"
imports=3
if command -v lstopo > /dev/null; then
  HWLOC_COMPONENTS=-x86 lstopo --whole-io --input "$fx/opteron-6300-prezen/root" --of xml > "$c/imports/opteron-hwloc.xml" 2> /dev/null &&
    imports=4
fi
# The lab's captures were taken in the guests without a selection: their stand-in GPUs are named
# in each scenario's `args`. Captured again with those (as `capture --gpu/--nvme` on the guest would
# have), the manifest records the pairs, and fleet must give the verdicts of expected/check.json.
lab=0
for capture in fixtures/lab/*/*.tar.zst; do
  name=$(basename "$capture" .tar.zst)
  read -r -a args < "fixtures/lab/$name/args"
  "$bin" --dump "$capture" capture "${args[@]}" -o "$c/lab/$name.tar.zst" > "$tmp/lab-capture.out" ||
    echo "FAIL capture of $capture with ${args[*]}"
  grep -q "^  pairs recorded for replays: ${args[*]}$" "$tmp/lab-capture.out" || echo "FAIL capture does not say its pairs"
  lab=$((lab + 1))
done
# A machine named by its own host name (identity.hostname), whatever its file is called.
mkdir -p "$c/named"
cp -a "$fx/xeon-sapphire-rapids/root" "$tmp/named-root"
echo gpu-node-42 > "$tmp/named-root/proc/sys/kernel/hostname"
"$bin" --root "$tmp/named-root" capture -o "$c/named/renamed-file.tar.zst" > /dev/null
# Saved reports, as support desks receive them; their captures are in rack1 too. One in each
# schema_version: 1 (every pair in full, kept from an older p2pcheck: tests/fleet/saved) and 4 (this p2pcheck's; tests/fleet/saved keeps a 3, read by unit tests).
cp "$repo/tests/fleet/saved/rhel98-epyc-schema1.json" "$c/saved/rhel98-saved.json"
"$bin" --root "$fx/xeon-broadwell-switch-acs/root" check --json > "$c/saved/acs-saved.json"
# What it cannot read: not a dump, a cut JSON, a JSON of the wrong kind, a lying check --json.
# Seeded, so every run reads the same bytes (urandom began with '{' one run in 256, or with gzip's magic).
python3 -c 'import random,sys; r=random.Random(4000); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(4000)))' \
  > "$c/bad/garbage.bin"
head -c 300 "$c/saved/rhel98-saved.json" > "$c/bad/cut.json"
"$bin" --root "$spr" topo --json > "$c/bad/topo.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["pairs"][0]["verdict"]=7; json.dump(j, open(sys.argv[2],"w"))' \
  "$c/saved/rhel98-saved.json" "$c/bad/lying.json"
fixtures=$(ls "$c/rack1" | wc -l)
# Every file in a folder of hosts is a host: garbage.bin (a failed upload) is one more input it
# cannot read, never passed over; only notes (the README) are skipped.
echo "collected by the Ansible playbook" > "$c/bad/README"
want_inputs=$((fixtures + 3 + imports + lab + 1 + 2 + 4))
echo "corpus: $fixtures fixture captures, 3 redacted copies, $imports imports, $lab lab captures, 1 named, 2 saved check --json, 4 bad, 1 skipped"

"$bin" fleet -j2 --json --junit "$tmp/fleet.xml" --html "$tmp/fleet.html" "$c" > "$tmp/fleet.json" 2> "$tmp/progress"
rc=$?
check "fleet exits 1 (a host fails; that wins over the unreadable inputs), not $rc" [ "$rc" -eq 1 ]
check "progress on stderr" grep -q "p2pcheck fleet: $want_inputs/$want_inputs inputs read" "$tmp/progress"
"$bin" fleet -j2 --color never "$c" > "$tmp/fleet-j2.txt" 2> /dev/null
"$bin" fleet -j1 --color never "$c" > "$tmp/fleet-j1.txt" 2> /dev/null
check "-j1 and -j2 give the same text" cmp -s "$tmp/fleet-j1.txt" "$tmp/fleet-j2.txt"
"$bin" fleet -j1 --json "$c" > "$tmp/fleet-j1.json" 2> /dev/null
check "-j1 and -j2 give the same JSON" cmp -s "$tmp/fleet-j1.json" "$tmp/fleet.json"
"$bin" fleet --csv "$c" > "$tmp/fleet.csv" 2> /dev/null
"$bin" fleet -q "$c" > "$tmp/quiet.txt" 2> "$tmp/quiet.err"
check "-q prints the RESULT line alone, no progress" \
  bash -c '[ "$(cat "$1")" = "$(grep "^RESULT: " "$2")" ] && [ ! -s "$3" ]' _ "$tmp/quiet.txt" "$tmp/fleet-j2.txt" "$tmp/quiet.err"

python3 - "$tmp" "$want_inputs" "$fixtures" "$repo/docs/json.md" "$repo/fixtures/lab" <<'PY' || failed=$((failed + 1))
import csv, json, os, sys, xml.etree.ElementTree as ET
tmp, want_inputs, fixtures, doc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), open(sys.argv[4]).read()
lab_dir = sys.argv[5]
problems = []
def expect(cond, what):
    if not cond:
        problems.append(what)
j = json.load(open(f"{tmp}/fleet.json"))
s = j["summary"]
for key in ("schema", "schema_version", "tool_version", "result", "summary", "failures", "unknowns", "topologies",
            "fixes", "without_fix", "hosts", "unreadable"):
    expect(key in j, f"JSON has no {key}")
    expect(f"`{key}`" in doc or f"`{key}[]`" in doc, f"docs/json.md does not document the fleet field `{key}`")
expect(j["schema"] == "p2pcheck.fleet" and j["schema_version"] == 1, "schema envelope")
expect(j["result"] == "FAIL", f"result {j['result']}")
expect(s["inputs"] == want_inputs, f"inputs {s['inputs']} != {want_inputs}")
expect(s["hosts"] == want_inputs - 4 and s["unreadable"] == 4, f"hosts {s['hosts']}, unreadable {s['unreadable']}")
expect(s["skipped"] == 1 and j["skipped"][0].endswith("/bad/README"), f"skipped {j['skipped']}")
expect(s["hosts"] >= 20, "at least 20 hosts")
expect(s["pass"] + s["fail"] + s["unknown"] + s["no_pairs"] == s["hosts"], "the results add up")
expect(s["pass"] > 0 and s["fail"] > 0, f"pass {s['pass']} fail {s['fail']}")
hosts = {h["host"]: h for h in j["hosts"]}
bad = {u["input"].rsplit("/", 1)[-1]: u["reason"] for u in j["unreadable"]}
expect(set(bad) == {"cut.json", "topo.json", "lying.json", "garbage.bin"}, f"unreadable {sorted(bad)}")
expect("not a recognised dump" in bad.get("garbage.bin", ""), f"garbage.bin: {bad.get('garbage.bin')}")
expect("not valid JSON" in bad.get("cut.json", ""), f"cut.json: {bad.get('cut.json')}")
expect("schema: expected \"p2pcheck.check\"" in bad.get("topo.json", ""), f"topo.json: {bad.get('topo.json')}")
expect("pairs[0].verdict: expected a string" in bad.get("lying.json", ""), f"lying.json: {bad.get('lying.json')}")
# Causes: at least three distinct ones, each host once, and the ones these fixtures are made for.
causes = {g["cause"] + (":" + g["detail"] if g["detail"] else ""): g for g in j["failures"]}
expect(len(causes) >= 3, f"only {len(causes)} failure causes")
want = {"kernel.config_p2pdma": {"epyc-guest-vm", "opteron-6300-prezen"},
        "kernel.known_bad": {"rhel98-epyc", "rhel98-saved"},
        "pair.host_bridge": {"intel-xeon-broadwell"},
        "pair.acs_redirect": {"xeon-broadwell-switch-acs", "acs-saved"},
        "storage.stack:md": {"epyc-mi300x-8gpu", "epyc-r1", "epyc-r2", "epyc-r3"}}
for cause, some in want.items():
    got = set(causes.get(cause, {}).get("hosts", []))
    expect(some <= got, f"{cause}: hosts {sorted(got)} lack {sorted(some - got)}")
for g in j["failures"] + j["unknowns"]:
    expect(len(g["hosts"]) == len(set(g["hosts"])) == g["host_count"], f"{g['cause']}: a host twice")
    expect(g["kind"] in ("finding", "pair") and g["title"], f"{g['cause']}: kind/title")
expect(causes.get("pair.host_bridge", {}).get("fix", "").startswith("put the GPU and the NVMe under one PCIe switch"),
       "pair.host_bridge has its fix")
expect(causes.get("pair.acs_redirect", {}).get("fix", "").startswith("boot with pci=disable_acs_redir="),
       "pair.acs_redirect has its fix")
for h in j["hosts"]:
    if h["result"] == "FAIL":
        expect(any(h["host"] in g["hosts"] for g in j["failures"]), f"{h['host']} fails with no cause")
# Fixes: every failing host is in exactly one fix group, named in its row; the ACS host's group (its
# capture and its saved report alike) carries one command line with both ports, resolved.
fix_of = {}
for f in j["fixes"]:
    expect(f["host_count"] == len(f["hosts"]) and f["id"].startswith("F"), f"fix group {f['id']}")
    expect(f["host_fix"]["kernel_cmdline"] or f["host_fix"]["steps"], f"{f['id']}: an empty fix")
    expect("{acs_redirect}" not in json.dumps(f["host_fix"]) and "{common_bridge}" not in json.dumps(f["host_fix"]),
           f"{f['id']}: a placeholder in {f['host_fix']}")
    for name in f["hosts"]:
        expect(name not in fix_of, f"{name} is in two fix groups")
        fix_of[name] = f
for h in j["hosts"]:
    if h["result"] == "FAIL":
        expect(h["fix"] is not None and fix_of.get(h["host"], {}).get("id") == h["fix"], f"{h['host']}: fix {h['fix']}")
for name in ("xeon-broadwell-switch-acs", "acs-saved"):
    expect(fix_of.get(name, {}).get("host_fix", {}).get("kernel_cmdline") ==
           "pci=disable_acs_redir=0000:03:09.0;0000:03:11.0", f"{name}: {fix_of.get(name)}")
expect(fix_of.get("epyc-r1") is fix_of.get("epyc-r2"), "the same machine twice needs the same fix")
# Topology: the EPYC server and its three redacted copies are one group, named after the first.
group = [t for t in j["topologies"] if "epyc-r1" in t["hosts"]]
expect(len(group) == 1 and set(group[0]["hosts"]) >= {"epyc-mi300x-8gpu", "epyc-r1", "epyc-r2", "epyc-r3"}
       and group[0]["like"] == "epyc-mi300x-8gpu", f"epyc group {group}")
expect(hosts["epyc-r1"]["redacted"] is True and hosts["epyc-mi300x-8gpu"]["redacted"] is False, "redacted flags")
expect(hosts["epyc-mi300x-8gpu-nonroot"]["fingerprint"] != hosts["epyc-mi300x-8gpu"]["fingerprint"],
       "the non-root view (port types unknown) is not the same topology")
expect(hosts["rhel98-saved"]["fingerprint"] is None and hosts["rhel98-saved"]["format"] == "check --json",
       "a saved check --json has no tree")
# A saved check --json tells what its capture tells, in either schema_version.
versions = {n: json.load(open(f"{tmp}/corpus/saved/{n}.json"))["schema_version"] for n in ("rhel98-saved", "acs-saved")}
expect(versions == {"rhel98-saved": 1, "acs-saved": 4}, f"saved check --json versions {versions}, want 1 and 4")
for saved, cap in (("rhel98-saved", "rhel98-epyc"), ("acs-saved", "xeon-broadwell-switch-acs")):
    a, b = hosts[saved], hosts[cap]
    expect(a["result"] == b["result"] and a["pair_counts"] == b["pair_counts"] and a["findings"] == b["findings"],
           f"{saved} and {cap} differ")
expect(hosts["spr-lspci"]["format"] == "lspci" and hosts["broadwell-bundle"]["format"] == "lspci"
       and hosts["acs-udev"]["format"] == "udev", "import formats")
expect(hosts["sw-epyc"]["format"] == "capture", "lab captures are named after their files ((none) is no name)")
# Each lab capture, with the pairs its args name recorded, is judged as `check $(cat args)` judged it.
lab_results = {}
for name in sorted(os.listdir(lab_dir)):
    want_check = json.load(open(os.path.join(lab_dir, name, "expected", "check.json")))
    h = hosts.get(name)
    if h is None:
        problems.append(f"lab capture {name} is not a host"); continue
    lab_results[h["result"]] = lab_results.get(h["result"], 0) + 1
    expect(h["result"] == want_check["result"], f"{name}: {h['result']}, its expected/check.json says {want_check['result']}")
    got = sorted((p["gpu"], p["nvme"], p["verdict"]) for p in h["pairs"])
    devices = want_check["devices"]
    want_pairs = sorted((devices[p[0]], devices[p[1]], want_check["decisions"][p[2]]["verdict"])
                        for p in want_check["pairs"])
    expect(got == want_pairs, f"{name}: pairs {got}, expected {want_pairs}")
expect(lab_results.get("NO PAIRS", 0) == 0 and len(lab_results) >= 2, f"lab results {lab_results}")
# Named by identity.hostname: the machine's own name, not its file's; same tree as its fixture.
expect("gpu-node-42" in hosts and "renamed-file" not in hosts, "a capture is named after identity.hostname")
if "gpu-node-42" in hosts:
    expect(hosts["gpu-node-42"]["fingerprint"] == hosts["xeon-sapphire-rapids"]["fingerprint"],
           "a renamed machine is the same topology")

# JUnit: a suite per host and one for the unreadable inputs, a case per check and per pair.
root = ET.parse(f"{tmp}/fleet.xml").getroot()
suites = {t.get("name"): t for t in root.findall("testsuite")}
expect(len(suites) == s["hosts"] + 1, f"{len(suites)} suites for {s['hosts']} hosts")
for name, h in hosts.items():
    t = suites.get(name)
    if t is None:
        problems.append(f"no testsuite for {name}"); continue
    cases = t.findall("testcase")
    pairs = [c for c in cases if c.get("classname") == name + ".pair"]
    expect(len(pairs) == h["pair_counts"]["total"], f"{name}: {len(pairs)} pair cases")
    failing = len([c for c in cases if c.find("failure") is not None])
    expect(int(t.get("failures")) == failing and int(t.get("tests")) == len(cases), f"{name}: counts")
    # A host without pairs may still fail a machine-wide check (a kernel without P2PDMA): a failure.
    expect(failing > 0 if h["result"] == "FAIL" else (failing == 0 or h["result"] == "NO PAIRS"),
           f"{name}: failures {failing}, result {h['result']}")
bdw = suites["intel-xeon-broadwell"]
expect(any(c.find("failure") is not None and "pair.host_bridge" in c.find("failure").get("message")
           for c in bdw.findall("testcase")), "the refused pair is a failure naming its cause")
errors = suites["unreadable inputs"].findall("testcase/error")
expect(len(errors) == 4 and root.get("errors") == "4", "unreadable inputs are errors")

# CSV: a row per host and per unreadable input, the same results as the JSON.
rows = list(csv.DictReader(open(f"{tmp}/fleet.csv", newline="")))
expect(len(rows) == s["hosts"] + 4, f"{len(rows)} CSV rows")
for r in rows:
    if r["host"]:
        expect(hosts[r["host"]]["result"] == r["result"], f"CSV {r['host']}")
expect(sum(1 for r in rows if r["result"] == "UNREADABLE" and r["error"]) == 4, "CSV unreadable rows")

# The text: causes with hosts and fix, the topology line, the table, the unread inputs.
text = open(f"{tmp}/fleet-j2.txt").read()
for want_text in ("\nFailures by cause\n", "hosts: kernel.known_bad — ", "    fix    ",
                  "hosts like epyc-mi300x-8gpu (", "\nHosts\n", "\nUnreadable inputs\n", "RESULT: FAIL — "):
    expect(want_text in text, f"text lacks {want_text!r}")
for p in problems:
    print("FAIL " + p)
print(f"fleet corpus: {s['hosts']} hosts, {s['unreadable']} unreadable, {len(causes)} failure causes, "
      f"{len(j['topologies'])} topologies; {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
checks=$((checks + 1))

# HTML: libxml2's parser reads it; one section and one matrix per host with pairs; nothing fetched.
hosts=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["hosts"])' "$tmp/fleet.json")
with_pairs=$(python3 -c 'import json,sys; print(sum(1 for h in json.load(open(sys.argv[1]))["hosts"] if h["pairs"]))' "$tmp/fleet.json")
check "xmllint --html parses the page without an error" bash -c "[ -z \"\$(xmllint --html --noout --nonet \"\$1\" 2>&1)\" ]" _ "$tmp/fleet.html"
check "xmllint parses the page as XML (XHTML)" xmllint --noout --nonet "$tmp/fleet.html"
check "one host section per host" [ "$(xmllint --html --xpath "count(//div[@class='host'])" "$tmp/fleet.html")" = "$hosts" ]
check "one matrix per host with pairs" [ "$(xmllint --html --xpath "count(//table[@class='matrix'])" "$tmp/fleet.html")" = "$with_pairs" ]
check "no script, no external resource" bash -c '! grep -qiE "<script|src=\"https?:|href=\"https?:|<link " "$1"' _ "$tmp/fleet.html"

# A directory of nothing but bad inputs still gives a report, exit 5.
"$bin" fleet "$c/bad" > "$tmp/bad.txt" 2> /dev/null
rc=$?
check "only unreadable inputs: exit 5, not $rc" [ "$rc" -eq 5 ]
check "only unreadable inputs: each listed" [ "$(grep -c '^  .*/bad/.*: ' "$tmp/bad.txt")" -eq 4 ]
check "only unreadable inputs: the README counted as skipped notes" grep -q "^skipped 1 file of notes" "$tmp/bad.txt"
# Every hostile input (tests/e2e/hostile: one per crash class found so far) is listed, none crashes.
"$bin" fleet -q --json tests/e2e/hostile > "$tmp/hostile.json" 2> /dev/null
rc=$?
check "tests/e2e/hostile: exit 5, not $rc" [ "$rc" -eq 5 ]
check "tests/e2e/hostile: every file an unreadable input with a reason, or skipped as notes" python3 -c '
import json, os, sys
j = json.load(open(sys.argv[1]))
assert j["summary"]["unreadable"] + j["summary"]["skipped"] == len(os.listdir(sys.argv[2])), j["summary"]
assert j["summary"]["hosts"] == 0
assert j["skipped"] == [], j["skipped"]
assert all(u["reason"] for u in j["unreadable"])' "$tmp/hostile.json" tests/e2e/hostile
"$bin" fleet "$c/rack1/xeon-sapphire-rapids.tar.zst" > /dev/null 2>&1
check "one passing host: exit 0" [ $? -eq 0 ]
"$bin" fleet --json --csv "$c/rack1" > /dev/null 2>&1
check "--json with --csv: usage, exit 3" [ $? -eq 3 ]
"$bin" --dump "$c/rack1/xeon-sapphire-rapids.tar.zst" fleet "$c/rack1" > /dev/null 2>&1
check "--dump with fleet: usage, exit 3" [ $? -eq 3 ]
"$bin" fleet --assume-kernel 7.1 --json "$c/saved" "$c/rack1/intel-xeon-broadwell.tar.zst" > "$tmp/assumed.json" 2> /dev/null
check "--assume-kernel: saved reports cannot be re-judged, captures are" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["summary"]["unreadable"] == 2 and all("--what-if-kernel and supplied facts need the capture" in u["reason"] for u in j["unreadable"])
assert j["summary"]["hosts"] == 1' "$tmp/assumed.json"
# The same for a supplied fact: a saved report was judged when it was made.
"$bin" fleet --kernel-config p2pdma=y --json "$c/saved" > "$tmp/supplied.json" 2> /dev/null
check "--kernel-config: saved reports cannot take supplied facts" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["summary"]["unreadable"] == 2 and j["summary"]["hosts"] == 0' "$tmp/supplied.json"

echo "fleet_test: $((checks - failed)) of $checks checks passed"
[ "$failed" -eq 0 ]
