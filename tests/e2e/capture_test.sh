#!/usr/bin/env bash
# Capture and replay end to end: every fixture and this machine are captured, replayed through
# --dump (and unpacked, through --root), and must give the same check/topo/paths JSON and exit
# codes as the original, apart from `source` and `capture`; a redacted capture differs only in
# placeholders; captures are byte-identical for the same input; FILE is never overwritten unless
# --force. Usage: tests/e2e/capture_test.sh BINARY [TREES]
# TREES: the generated fixture trees (<TREES>/<name>/root), else $P2PCHECK_FIXTURE_TREES, else
# build/fixtures.
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"  # the non-root capture below writes into a subdirectory
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
# JSON comparisons are queued and run in one python process at the end.
same_queue() { local name=$1 a=$2 b=$3; shift 3; printf '%s\t%s\t%s\t%s\n' "$name" "$a" "$b" "${1:-}" >> "$tmp/compare.list"; }

# run OUT CMDS SOURCE_ARGS... -> OUT/<cmd>.json and OUT/rc (exit codes)
cmds="check topo"
run_all() {
  local out=$1; shift
  mkdir -p "$out"; : > "$out/rc"
  for cmd in $cmds; do
    "$bin" "$@" $cmd --json > "$out/$cmd.json" 2>/dev/null; echo "$cmd $?" >> "$out/rc"
  done
}
compare() {  # name dirA dirB [--placeholders]
  local name=$1 a=$2 b=$3; shift 3
  for cmd in $cmds; do
    same_queue "$name: $cmd --json" "$a/$cmd.json" "$b/$cmd.json" "$@"
  done
  if cmp -s "$a/rc" "$b/rc"; then ok; else fail "$name: exit codes differ ($(tr '\n' ' ' < "$a/rc") vs $(tr '\n' ' ' < "$b/rc"))"; fi
}

fixtures=0
for dir in "$fx"/*/; do
  name=$(basename "$dir"); root=$fx/$name/root
  [ -d "$root/sys" ] || continue
  fixtures=$((fixtures + 1))
  run_all "$tmp/$name/orig" --root "$root"
  "$bin" --root "$root" capture -o "$tmp/$name.tar.zst" > /dev/null || { fail "$name: capture failed"; continue; }
  run_all "$tmp/$name/dump" --dump "$tmp/$name.tar.zst"
  compare "$name (--dump)" "$tmp/$name/orig" "$tmp/$name/dump"
  mkdir -p "$tmp/$name/unpacked" && tar --zstd -C "$tmp/$name/unpacked" -xf "$tmp/$name.tar.zst"
  run_all "$tmp/$name/tree" --root "$tmp/$name/unpacked/p2pcheck-capture"
  compare "$name (unpacked, --root)" "$tmp/$name/orig" "$tmp/$name/tree"
  # Capturing a replay trims it to what the analysis reads: same verdicts again, same bytes twice.
  "$bin" --dump "$tmp/$name.tar.zst" capture -o "$tmp/$name.again.tar.gz" > /dev/null
  "$bin" --dump "$tmp/$name.tar.zst" capture -o "$tmp/$name.again2.tar.gz" > /dev/null
  if cmp -s "$tmp/$name.again.tar.gz" "$tmp/$name.again2.tar.gz"; then ok; else fail "$name: same input gave different bytes"; fi
  run_all "$tmp/$name/again" --dump "$tmp/$name.again.tar.gz"
  compare "$name (capture of the capture)" "$tmp/$name/orig" "$tmp/$name/again"
  "$bin" --root "$root" capture --redact -o "$tmp/$name.redacted.tar.xz" > /dev/null
  run_all "$tmp/$name/redacted" --dump "$tmp/$name.redacted.tar.xz"
  compare "$name (--redact)" "$tmp/$name/orig" "$tmp/$name/redacted" --placeholders
done

[ "$fixtures" -gt 0 ] || fail "no fixture trees in $fx (python3 tools/mkfixture.py --all --out $fx)"
# A real 8-GPU server's capture stays small.
size=$(stat -c %s "$tmp/epyc-mi300x-8gpu.tar.zst" 2>/dev/null || echo 0)
if [ "$size" -gt 0 ] && [ "$size" -lt 1048576 ]; then ok; else fail "epyc-mi300x-8gpu capture is $size bytes; expected well under 1 MiB"; fi

# This machine.
run_all "$tmp/live/orig"
"$bin" capture -o "$tmp/live.tar.zst" > "$tmp/live.out" || fail "live capture failed"
run_all "$tmp/live/dump" --dump "$tmp/live.tar.zst"
compare "live (--dump)" "$tmp/live/orig" "$tmp/live/dump" --live
if "$bin" --dump "$tmp/live.tar.zst" topo | grep -q "replaying a capture by p2pcheck"; then ok; else fail "replay does not say it is a capture"; fi
if tar --zstd -xOf "$tmp/live.tar.zst" p2pcheck-capture/live/hip.json | grep -q '"p2pcheck.live.hip"'; then ok; else fail "live capture lacks live/hip.json"; fi

# Without root the kernel shows 64 bytes of config space: the replay must say so.
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
  mkdir -p "$tmp/nobody" && chmod 777 "$tmp/nobody"
  if setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" capture -o "$tmp/nobody/c.tar.zst" > "$tmp/nobody.out" 2>&1; then
    if "$bin" --dump "$tmp/nobody/c.tar.zst" check 2>/dev/null | grep -q "as root: no" &&
       "$bin" --dump "$tmp/nobody/c.tar.zst" check 2>/dev/null | grep -q "captured without root"; then ok; else fail "non-root capture: replay does not note it"; fi
    if "$bin" --dump "$tmp/nobody/c.tar.zst" check --json=pretty 2>/dev/null | grep -q '"as_root": false'; then ok; else fail "non-root capture: --json lacks as_root false"; fi
  else
    fail "non-root capture failed: $(head -3 "$tmp/nobody.out")"
  fi
fi

# Never a partial or unwanted write.
"$bin" --root "$fx/intel-xeon-broadwell/root" capture -o "$tmp/live.tar.zst" > "$tmp/out" 2>&1
if [ $? -eq 3 ] && grep -q "file exists; pass --force" "$tmp/out"; then ok; else fail "capture overwrote an existing file"; fi
if "$bin" --root "$fx/intel-xeon-broadwell/root" capture --force -o "$tmp/live.tar.zst" > /dev/null; then ok; else fail "--force did not replace"; fi
"$bin" --root "$fx/intel-xeon-broadwell/root" capture -o "$tmp/no/such/dir/x.tar.zst" > "$tmp/out" 2>&1
if [ $? -eq 3 ]; then ok; else fail "capture into a missing directory: expected exit 3"; fi
if ls -a "$tmp" | grep -q '^\.p2pcheck-capture-'; then fail "a temporary file was left behind"; else ok; fi

json=$(python3 tests/e2e/json_same.py --list "$tmp/compare.list")
grep -v "passed, .* failed" <<< "$json"
jp=$(tail -1 <<< "$json" | awk '{print $1}'); jf=$(tail -1 <<< "$json" | awk '{print $3}')
passed=$((passed + jp)); failed=$((failed + jf))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
