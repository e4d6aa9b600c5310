#!/usr/bin/env bash
# No PASS on any surface that the evidence does not carry (issue 46), over every fixture:
# - --fail-on only tightens: each name and combination never lowers the answer below the default's
#   (PASS < UNKNOWN < FAIL), the explicit -NAME form is named in the RESULT line, an empty or unknown
#   name is a usage error, and no policy passes a selection with no pair allowed;
# - a kernel on a known-bad RHEL base (any rebuild, any suffix) never reads PASS;
# - paths answers with check's RESULT, exit code and verdicts;
# - a selection's RESULT does not pass over its own warnings, and the problems of other devices are
#   printed under "Not counted";
# - fleet over a folder with unreadable members (random bytes, an empty capture) never says PASS in
#   its text, JSON, exit code, JUnit or HTML.
# Usage: tests/e2e/truth_test.sh BINARY [TREES]   (TREES as in tests/e2e/golden.sh; default build/fixtures)
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
[ -d "$fx/epyc-mi300x-8gpu/root/sys" ] || { echo "truth_test: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
# The answer's strength from an exit code: PASS 0 < UNKNOWN 1 < FAIL 2 (NO PAIRS 4 stands apart).
strength() { case $1 in 0) echo 0 ;; 2) echo 1 ;; 1) echo 2 ;; *) echo "x$1" ;; esac; }
crashed() { [ "$1" -ge 128 ]; }

policies=(default unknown warn unknown,warn refused stack refused,stack refused,stack,unknown,warn warn,unknown)
rebuilds=(5.14.0-687.49.1.1toss.t5.x86_64 5.14.0-687.el9.x86_64 5.14.0-700.1.1.el9_10.x86_64 6.12.0-211.el10.x86_64
  6.12.0-230.1.1.el10_3.x86_64+debug 5.14.0-687.49.1.el9_8.x86_64 6.12.0-211.58.1.el10_2.x86_64)

for dir in "$fx"/*/; do
  name=$(basename "$dir") root="$dir/root"
  [ -d "$root/sys" ] || continue
  "$bin" --root "$root" check --quiet > /dev/null 2>&1; base=$?
  crashed "$base" && { bad "$name: check crashed ($base)"; continue; }
  [ "$base" -eq 4 ] && continue
  # Each name and combination: never below the default.
  for p in "${policies[@]}"; do
    "$bin" --root "$root" check --quiet --fail-on "$p" > "$tmp/line" 2>&1; rc=$?
    if [ "$(strength "$rc")" \< "$(strength "$base")" ]; then
      bad "$name: --fail-on $p exits $rc, below the default's $base: $(cat "$tmp/line")"
    else ok; fi
  done
  # The explicit removal forms: named in the RESULT line; zero allowed is never a PASS.
  for p in -stack -refused -refused,-stack; do
    "$bin" --root "$root" check --json --fail-on="$p" > "$tmp/removed.json" 2> /dev/null; rc=$?
    crashed "$rc" && { bad "$name: --fail-on=$p crashed"; continue; }
    python3 - "$tmp/removed.json" "$p" "$name" << 'EOF' && ok || bad "$name: --fail-on=$p"
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["counts"]
if c["pairs"] and c["allowed"] == 0 and doc["result"] == "PASS":
    sys.exit(f"{sys.argv[3]}: PASS with no pair allowed under --fail-on={sys.argv[2]}")
EOF
  done
  "$bin" --root "$root" check --quiet --fail-on=-stack > "$tmp/line" 2>&1
  if grep -q "failing:" "$tmp/line" && ! grep -q "not counted (--fail-on -stack)" "$tmp/line"; then
    bad "$name: -stack does not say what it left out: $(cat "$tmp/line")"
  else ok; fi
  # A known-bad base, whatever the suffix: never PASS, in text, JSON or exit code.
  for rel in "${rebuilds[@]}"; do
    "$bin" --root "$root" --what-if-kernel "$rel" check --color never > "$tmp/text" 2> /dev/null; rc=$?
    "$bin" --root "$root" --what-if-kernel "$rel" check --json > "$tmp/json" 2> /dev/null
    word=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"])' "$tmp/json" 2> /dev/null)
    if [ "$rc" -eq 0 ] || grep -q '^RESULT: PASS' "$tmp/text" || [ "$word" = PASS ]; then
      bad "$name: --what-if-kernel $rel says PASS (exit $rc, JSON $word)"
    else ok; fi
  done
  # paths: the same RESULT and exit code as check, and its verdicts (JSON: every pair).
  "$bin" --root "$root" check --json > "$tmp/check.json" 2> /dev/null; crc=$?
  "$bin" --root "$root" paths --json > "$tmp/paths.json" 2> /dev/null; prc=$?
  "$bin" --root "$root" paths --color never > "$tmp/paths.txt" 2> /dev/null
  "$bin" --root "$root" check --quiet --color never > "$tmp/check.txt" 2> /dev/null
  [ "$crc" -eq "$prc" ] && ok || bad "$name: paths exits $prc, check $crc"
  [ "$(grep '^RESULT' "$tmp/paths.txt")" = "$(cat "$tmp/check.txt")" ] && ok || bad "$name: paths' RESULT is not check's"
  python3 - "$tmp/check.json" "$tmp/paths.json" << 'EOF' && ok || bad "$name: paths' verdicts"
import json, sys
check, paths = (json.load(open(p)) for p in sys.argv[1:3])
assert check["result"] == paths["result"], (check["result"], paths["result"])
assert len(check["pairs"]) == len(paths["pairs"])
for c, p in zip(check["pairs"], paths["pairs"]):
    d = check["decisions"][c[2]]
    assert (check["devices"][c[0]], check["devices"][c[1]]) == (p["gpu"], p["nvme"])
    assert (d["verdict"], d["map_type"]) == (p["verdict"], p["map_type"]), (c, p)
    if (check["port_lists"][c[4]] or check["port_lists"][c[5]]) and d["common_bridge"]:
        assert p["route"]["kind"] == "redirected", p
EOF
done

# An empty or unknown --fail-on name: a usage error naming it.
for p in "" nope "unknown,,warn" -; do
  "$bin" --root "$fx/xeon-sapphire-rapids/root" check --fail-on="$p" > /dev/null 2> "$tmp/err"; rc=$?
  [ "$rc" -eq 3 ] && grep -q -- "--fail-on" "$tmp/err" && ok || bad "--fail-on '$p' exits $rc: $(cat "$tmp/err")"
done

# A selection: /srv's own LVM warning is in its RESULT; the other file systems' FAIL lines are not
# counted and say so.
st=$fx/storage-stacks/root
"$bin" --root "$st" --nvme /srv check --color never > "$tmp/srv.txt" 2>&1
result=$(grep '^RESULT' "$tmp/srv.txt")
case $result in *"warnings: storage.stack"*) ok ;; *) bad "--nvme /srv: RESULT omits its own warning: $result" ;; esac
awk '/^Not counted/{n=1} /^  FAIL/{ if (!n) bad=1 } END{ exit bad }' "$tmp/srv.txt" && ok ||
  bad "--nvme /srv: a FAIL line outside 'Not counted' while the RESULT is $result"
grep -q '^Not counted: about devices and file systems outside the selection' "$tmp/srv.txt" && ok || bad "--nvme /srv: no 'Not counted' heading"

# fleet with a failed upload beside a good capture: never PASS in any form.
f=$tmp/fleet
mkdir -p "$f"
"$bin" --root "$fx/xeon-sapphire-rapids/root" capture -o "$f/node01.tar.zst" > /dev/null 2>&1
head -c 4096 /dev/urandom > "$f/node02.tar.zst"
: > "$f/node03.tar.zst"
echo "collected by hand" > "$f/README"
"$bin" fleet --json --junit "$tmp/fleet.xml" --html "$tmp/fleet.html" "$f" > "$tmp/fleet.json" 2> /dev/null; rc=$?
"$bin" fleet --color never "$f" > "$tmp/fleet.txt" 2> /dev/null
[ "$rc" -eq 5 ] && ok || bad "fleet with unreadable members exits $rc, not 5"
grep -q '^RESULT: PASS' "$tmp/fleet.txt" && bad "fleet text says PASS: $(grep '^RESULT' "$tmp/fleet.txt")" || ok
python3 - "$tmp/fleet.json" "$tmp/fleet.xml" "$tmp/fleet.html" << 'EOF' && ok || bad "fleet JSON/JUnit/HTML with unreadable members"
import json, sys, xml.etree.ElementTree as ET
doc = json.load(open(sys.argv[1]))
assert doc["result"] != "PASS", doc["result"]
names = sorted(u["input"].rsplit("/", 1)[-1] for u in doc["unreadable"])
assert names == ["node02.tar.zst", "node03.tar.zst"], names
assert [s.rsplit("/", 1)[-1] for s in doc["skipped"]] == ["README"], doc["skipped"]
junit = ET.parse(sys.argv[2]).getroot()
assert junit.get("errors") == "2", junit.attrib
html = open(sys.argv[3], encoding="utf-8").read()
assert "node02.tar.zst" in html and "node03.tar.zst" in html
assert ">PASS<" not in html.split("<h2", 1)[0], "HTML banner says PASS"
EOF

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 100 ]
