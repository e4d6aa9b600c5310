#!/usr/bin/env bash
# The views fleets read (issue 51), end to end on real inputs and real daemons:
# - `diff`: the Broadwell switch fixture as qualified (booted with pci=disable_acs_redir= for its two
#   ACS ports: a variant generated here from its machine.toml) against the fixture as it is (ACS
#   redirect back): WORSE naming the port, exit 1; the other way BETTER, exit 0; the same, SAME; a
#   corrupt, missing or truncated baseline: exit 5 naming the file.
# - `check --prometheus`: Debian's prometheus-node-exporter started here on 127.0.0.1 (a free port,
#   textfile collector only) scrapes the directory: node_textfile_scrape_error 0 and the series
#   present, also for a machine whose names are hostile; `promtool check metrics` (Debian's
#   prometheus) finds nothing; a bounded file for a small --prometheus-max-pairs; an unwritable
#   directory is exit 5 naming the file and leaves nothing behind.
# - `check --nfd`: the label file's grammar, size and expiry; written whole (no dot-file left).
# Usage: tests/e2e/fleet_engines_test.sh BINARY   (node_exporter / promtool parts skip with a note
# when those are not installed: scripts/setup-deps.sh installs them)
set -u
bin=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
fx=$(realpath -m "${P2PCHECK_FIXTURE_TREES:-$repo/build/fixtures}")
[ -d "$fx/xeon-broadwell-switch-acs/root/sys" ] || { echo "fleet_engines: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d /tmp/p2pcheck-engines.XXXXXX)
pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null; done
  rm -rf "$tmp"
}
trap stop EXIT
failed=0 checks=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
# expect NAME RC REGEX -- COMMAND...: the exit code, and a line of stdout+stderr matching REGEX.
expect() {
  local name=$1 want=$2 re=$3 rc; shift 4
  checks=$((checks + 1))
  "$@" > "$tmp/$name.out" 2>&1; rc=$?
  [ "$rc" -eq "$want" ] || { fail "$name: exit $rc, wanted $want"; cat "$tmp/$name.out"; return; }
  grep -qE -- "$re" "$tmp/$name.out" || { fail "$name: no line /$re/ in:"; cat "$tmp/$name.out"; }
}

# ---- diff --------------------------------------------------------------------------------------
acs=$fx/xeon-broadwell-switch-acs/root
mkdir -p "$tmp/q/xeon-broadwell-switch-acs"
sed -e '/^iommu_domain = /a disable_acs_redir = ["0000:03:09.0", "0000:03:11.0"]' \
  -e 's/ intel_iommu=on"$/ intel_iommu=on pci=disable_acs_redir=0000:03:09.0;0000:03:11.0"/' \
  "$repo/fixtures/xeon-broadwell-switch-acs/machine.toml" > "$tmp/q/xeon-broadwell-switch-acs/machine.toml"
python3 "$repo/tools/mkfixture.py" --out "$tmp/gen" "$tmp/q/xeon-broadwell-switch-acs/machine.toml" > /dev/null ||
  fail "mkfixture of the qualified variant"
qualified=$tmp/gen/xeon-broadwell-switch-acs/root
"$bin" --root "$qualified" check --json > "$tmp/baseline.json"
"$bin" --root "$acs" check --json > "$tmp/now.json"
"$bin" --root "$acs" capture -o "$tmp/now.tar.zst" > /dev/null
expect diff_worse 1 '^DIFF: WORSE — ACS redirect on 0000:03:09.0 refuses pairs \(not at the baseline\); ACS redirect on 0000:03:11.0' \
  -- "$bin" diff "$tmp/baseline.json" "$tmp/now.json"
expect diff_worse_pair 1 '^  worse  0000:0[45]:00.0 <-> nvme[0-9] 0000:0[67]:00.0: supported -> not_supported \(pair.acs_redirect\)$' \
  -- "$bin" diff "$tmp/baseline.json" "$tmp/now.tar.zst"
expect diff_worse_root 1 '^  worse  0000:03:09.0: refused none -> refuses pairs$' -- "$bin" --root "$acs" diff "$tmp/baseline.json"
expect diff_better 0 '^DIFF: BETTER — nothing got worse; result FAIL -> ' -- "$bin" diff "$tmp/now.json" "$tmp/baseline.json"
expect diff_same 0 '^DIFF: SAME — no change; result FAIL -> FAIL$' -- "$bin" -q diff "$tmp/now.json" "$tmp/now.tar.zst"
expect diff_json 1 '"change":"worse"' -- "$bin" diff --json "$tmp/baseline.json" "$tmp/now.json"
printf '{"schema": "p2pcheck.check", "schema_version": 2, "result": "PA' > "$tmp/truncated.json"
echo 'not json at all {' > "$tmp/corrupt.json"
expect diff_truncated 5 "^p2pcheck: cannot read the baseline $tmp/truncated.json: " -- "$bin" diff "$tmp/truncated.json" "$tmp/now.json"
expect diff_corrupt 5 "^p2pcheck: cannot read the baseline $tmp/corrupt.json: " -- "$bin" diff "$tmp/corrupt.json" "$tmp/now.json"
expect diff_missing 5 "^p2pcheck: cannot read the baseline $tmp/none.json: " -- "$bin" diff "$tmp/none.json" "$tmp/now.json"
expect diff_current_missing 5 "^p2pcheck: cannot read the current $tmp/none.json: " -- "$bin" diff "$tmp/baseline.json" "$tmp/none.json"
expect diff_both 3 "either as its second argument" -- "$bin" --root "$acs" diff "$tmp/baseline.json" "$tmp/now.json"

# ---- NFD ---------------------------------------------------------------------------------------
mkdir -p "$tmp/features.d"
# The 8-GPU EPYC: all 72 pairs allowed, its md RAID fails storage.stack; --fail-on=-stack leaves that
# out, so the labels say PASS and p2p=all (the labels are check's result under its policy).
expect nfd 0 '^RESULT: PASS' -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" --fail-on=-stack check -q --nfd "$tmp/features.d/p2pcheck"
checks=$((checks + 1))
python3 - "$tmp/features.d" <<'PY' || failed=$((failed + 1))
import datetime, os, re, sys
d = sys.argv[1]
names = os.listdir(d)
if names != ["p2pcheck"]:
    sys.exit(f"FAIL nfd: files {names}, wanted only p2pcheck (no temporary dot-file left)")
text = open(os.path.join(d, "p2pcheck"), encoding="utf-8").read()
problems = []
if len(text.encode()) >= 65536:
    problems.append("64 kB or more")
expiry = re.search(r"^# \+expiry-time=(\S+)$", text, re.M)
if not expiry:
    problems.append("no expiry-time")
else:
    t = datetime.datetime.strptime(expiry.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    ahead = (t - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    if not 10700 < ahead <= 10800:
        problems.append(f"expiry {ahead:.0f} s ahead, wanted 3 h")
labels = dict(l.split("=", 1) for l in text.splitlines() if l and not l.startswith("#"))
for k, v in labels.items():
    prefix, name = k.split("/", 1)
    if prefix != "feature.node.kubernetes.io" or len(name) > 63 or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", name):
        problems.append(f"label name {k}")
    if len(v) > 63 or not re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", v):
        problems.append(f"label value {k}={v}")
want = {"feature.node.kubernetes.io/p2pcheck.result": "PASS", "feature.node.kubernetes.io/p2pcheck.p2p": "all"}
for k, v in want.items():
    if labels.get(k) != v:
        problems.append(f"{k}={labels.get(k)}, wanted {v}")
print(("FAIL nfd: " + "; ".join(problems)) if problems else f"nfd: {len(labels)} labels, {len(text)} bytes")
sys.exit(1 if problems else 0)
PY

# ---- Prometheus --------------------------------------------------------------------------------
# One directory a machine, as on a node (node_exporter merges the files of one directory).
mkdir -p "$tmp/acs" "$tmp/epyc" "$tmp/hostile"
expect prom_write 1 '^RESULT: FAIL' -- "$bin" --root "$acs" check -q --prometheus "$tmp/acs/p2pcheck.prom" --baseline "$tmp/baseline.json"
expect prom_epyc 0 '^RESULT: PASS' -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" --fail-on=-stack check -q --prometheus "$tmp/epyc/p2pcheck.prom"
python3 "$repo/tests/e2e/hostile_names.py" tree "$acs" "$tmp/hostile-root" > /dev/null
"$bin" --root "$tmp/hostile-root" check -q --prometheus "$tmp/hostile/p2pcheck.prom" > /dev/null
grep -q '^p2pcheck_info{host="[^"]*\\\\x1b' "$tmp/hostile/p2pcheck.prom" ||
  fail "prometheus: the hostile host name is not escaped in p2pcheck_info: $(grep '^p2pcheck_info' "$tmp/hostile/p2pcheck.prom")"
expect prom_bounded 1 '^RESULT: FAIL' -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check -q --prometheus-max-pairs 10 --prometheus "$tmp/bounded.prom"
grep -q '^p2pcheck_pair_series_limited 1$' "$tmp/bounded.prom" || fail "bounded: no p2pcheck_pair_series_limited 1"
! grep -q '^p2pcheck_pair_allowed{' "$tmp/bounded.prom" || fail "bounded: per-pair series above the bound"
grep -q '^# 72 pairs exceed the bound of 10' "$tmp/bounded.prom" || fail "bounded: no comment saying so"
touch "$tmp/notadir"
expect prom_unwritable 5 "^p2pcheck: $tmp/notadir/x.prom: cannot create a temporary file beside it" \
  -- "$bin" --root "$acs" check -q --prometheus "$tmp/notadir/x.prom"
mkdir -p "$tmp/readonly"
echo "p2pcheck_result{result=\"PASS\"} 1" > "$tmp/readonly/p2pcheck.prom"
chattr +i "$tmp/readonly" 2> /dev/null && {
  expect prom_immutable 5 "^p2pcheck: $tmp/readonly/p2pcheck.prom: cannot create a temporary file beside it" \
    -- "$bin" --root "$acs" check -q --prometheus "$tmp/readonly/p2pcheck.prom"
  [ "$(cat "$tmp/readonly/p2pcheck.prom")" = 'p2pcheck_result{result="PASS"} 1' ] || fail "the old file was changed"
  chattr -i "$tmp/readonly"
}
expect prom_suffix 3 "textfile collector reads only \*.prom" -- "$bin" --root "$acs" check --prometheus "$tmp/x.txt"
for d in acs epyc hostile; do
  [ "$(ls -A "$tmp/$d")" = p2pcheck.prom ] || fail "prometheus: $tmp/$d holds $(ls -A "$tmp/$d" | tr '\n' ' ')"
done
grep -q '^p2pcheck_drift_worse 1$' "$tmp/acs/p2pcheck.prom" || fail "prometheus: no p2pcheck_drift_worse 1 for the ACS regression"
grep -q '^p2pcheck_pair_refused{gpu="0000:05:00.0",nvme="0000:06:00.0",nvme_name="nvme0"} 1$' "$tmp/acs/p2pcheck.prom" ||
  fail "prometheus: no refused series for the ACS pair"

if command -v promtool > /dev/null; then
  for f in "$tmp"/{acs,epyc,hostile}/p2pcheck.prom "$tmp/bounded.prom"; do
    checks=$((checks + 1))
    promtool check metrics < "$f" > "$tmp/promtool.out" 2>&1 || { fail "promtool check metrics $f"; cat "$tmp/promtool.out"; }
  done
  echo "promtool check metrics: 4 files, $failed failed so far"
else
  echo "SKIP promtool: Debian's prometheus package is not installed (scripts/setup-deps.sh)"
fi

# scrape DIR SERIES...: Debian's node_exporter on 127.0.0.1 (a free port, the textfile collector
# only) reading DIR; node_textfile_scrape_error must be 0 and each SERIES (a whole line) present.
scrape() {
  local dir=$1 port pid ok=0; shift
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$dir" > "$tmp/exporter.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 50); do
    python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read().decode())" \
      > "$tmp/scrape.txt" 2> /dev/null && { ok=1; break; }
    sleep 0.2
  done
  kill "$pid"; wait "$pid" 2> /dev/null
  checks=$((checks + 1))
  [ "$ok" -eq 1 ] || { fail "node_exporter on 127.0.0.1:$port did not answer"; cat "$tmp/exporter.log"; return; }
  grep -qx 'node_textfile_scrape_error 0' "$tmp/scrape.txt" ||
    { fail "$dir: node_textfile_scrape_error is not 0"; grep textfile "$tmp/scrape.txt"; cat "$tmp/exporter.log"; }
  grep -q "^node_textfile_mtime_seconds{file=\"\(.*/\)\?p2pcheck.prom\"}" "$tmp/scrape.txt" || fail "$dir: p2pcheck.prom was not read"
  local series
  for series; do grep -qxF -- "$series" "$tmp/scrape.txt" || fail "$dir: the scrape lacks $series"; done
  echo "node_exporter 127.0.0.1:$port on $(basename "$dir"): $(grep -c '^p2pcheck_' "$tmp/scrape.txt") p2pcheck series, $(grep '^node_textfile_scrape_error' "$tmp/scrape.txt")"
}
exporter=$(command -v prometheus-node-exporter || true)
if [ -n "$exporter" ]; then
  scrape "$tmp/acs" 'p2pcheck_result{result="FAIL"} 1' 'p2pcheck_drift_worse 1' 'p2pcheck_acs_redirect_ports 2' \
    'p2pcheck_pair_refused{gpu="0000:05:00.0",nvme="0000:06:00.0",nvme_name="nvme0"} 1'
  scrape "$tmp/epyc" 'p2pcheck_result{result="PASS"} 1' 'p2pcheck_pairs{verdict="allowed"} 72' \
    'p2pcheck_pair_allowed{gpu="0000:03:00.0",nvme="0000:05:00.0",nvme_name="nvme0"} 1' \
    'p2pcheck_known_bad_kernel{state="false"} 1'
  scrape "$tmp/hostile" 'p2pcheck_result{result="FAIL"} 1'
else
  echo "SKIP node_exporter: Debian's prometheus-node-exporter is not installed (scripts/setup-deps.sh)"
fi

echo "fleet_engines: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
