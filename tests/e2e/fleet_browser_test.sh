#!/usr/bin/env bash
# The `p2pcheck fleet --html` page in a real browser: Debian's chromium, headless, offline
# (--dump-dom prints the DOM after it has loaded and laid out the page). The DOM must hold what
# the page was written with: the result, a section and a matrix per host, the cause groups. Label
# lab (tests/lab/setup-deps.sh installs chromium).
# Usage: tests/e2e/fleet_browser_test.sh BINARY [TREES]
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
browser=$(command -v chromium || command -v chromium-browser) ||
  { echo "FAIL no chromium: tests/lab/setup-deps.sh installs it"; exit 1; }
[ -d "$fx/epyc-mi300x-8gpu/root/sys" ] || { echo "fleet_browser_test: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in" "$tmp/profile"
for name in epyc-mi300x-8gpu intel-xeon-broadwell xeon-sapphire-rapids rhel98-epyc; do
  "$bin" --root "$fx/$name/root" capture -o "$tmp/in/$name.tar.zst" > /dev/null
done
cp fixtures/lab/sw-epyc/sw-epyc.tar.zst "$tmp/in/"
echo "not a dump" > "$tmp/in/junk.txt"
"$bin" fleet -q --html "$tmp/fleet.html" --json "$tmp/in" > "$tmp/fleet.json" 2> /dev/null
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
  --user-data-dir="$tmp/profile" --dump-dom "file://$tmp/fleet.html" > "$tmp/dom.html" 2> "$tmp/browser.err"
rc=$?
[ "$rc" -eq 0 ] && [ -s "$tmp/dom.html" ] || { echo "FAIL chromium exit $rc"; tail -5 "$tmp/browser.err"; exit 1; }
python3 - "$tmp/dom.html" "$tmp/fleet.json" <<'PY'
import json, sys
from html.parser import HTMLParser
dom, j = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
class Count(HTMLParser):
    def __init__(self):
        super().__init__(); self.tags = []
    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
p = Count(); p.feed(dom)
def count(tag, cls=None, id=None):
    return sum(1 for t, a in p.tags if t == tag and (cls is None or cls in (a.get("class") or "").split())
               and (id is None or a.get("id") == id))
problems = []
hosts = j["summary"]["hosts"]
with_pairs = sum(1 for h in j["hosts"] if h["pairs"])
if count("div", "host") != hosts: problems.append(f"{count('div', 'host')} host sections, {hosts} hosts")
if count("table", "matrix") != with_pairs: problems.append(f"{count('table', 'matrix')} matrices, {with_pairs} hosts with pairs")
if count("div", "cause") != len(j["failures"]) + len(j["unknowns"]): problems.append("cause sections")
if f"RESULT: {j['result']}" not in dom: problems.append("the RESULT line")
if count("script"): problems.append("a script in the DOM")
for x in problems: print("FAIL " + x)
print(f"chromium rendered the fleet page: {hosts} hosts, {with_pairs} matrices, "
      f"{len(j['failures']) + len(j['unknowns'])} causes; {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
