#!/usr/bin/env bash
# Parse every fixture tree with pciutils' own sysfs backend and fail on anything lspci would not
# print for a real machine: non-zero exit, stderr output, "Unknown" (header type / class ...),
# "access denied", "!!!" (lspci's consistency complaints), or a device count that differs from the
# number of PCI `config` files in the tree.
#
# Fixtures whose config files were truncated on purpose (machine.toml: config_bytes < 256, the
# non-root view) must instead show "Capabilities: <access denied>" for every device that has a
# capability list; the other checks apply unchanged.
#
# The trees are generated (python3 tools/mkfixture.py --all --out TREES); TREES is the argument,
# else $P2PCHECK_FIXTURE_TREES, else build/fixtures.
# Needs: lspci (pciutils), find. Run from anywhere: bash tests/e2e/fixtures_lspci_test.sh [TREES]
set -u
trees=$(realpath -m "${1:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
command -v lspci >/dev/null || { echo "fixtures_lspci_test: lspci not installed (apt-get install pciutils)"; exit 1; }

# libkmod cannot find /lib/modules/$(uname -r) inside containers; lspci -v then prints this to
# stderr. It is about the machine running the test, not the fixture, so it alone is ignored.
KMOD_NOISE='^lspci: Unable to load libkmod resources: error -[0-9]+$'

passed=0
failed=0
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

shopt -s nullglob
roots=("$trees"/*/root)
if [ ${#roots[@]} -eq 0 ]; then
  echo "fixtures_lspci_test: no $trees/*/root found (python3 tools/mkfixture.py --all --out $trees)"
  exit 1
fi

for root in "${roots[@]}"; do
  name=$(basename "$(dirname "$root")")
  abs=$(cd "$root" && pwd)
  ncfg=$(find "$abs/sys/devices" -name config -type f | wc -l)
  small=$(find "$abs/sys/devices" -name config -type f -size -256c | wc -l)
  nonroot=0
  [ "$small" -gt 0 ] && nonroot=1
  ok=1
  for opts in "-nn" "-t" "-tv" "-vvv" "-vvvnn" "-D"; do
    out=$(lspci -A linux-sysfs -O "sysfs.path=$abs/sys/bus/pci" $opts 2>/tmp/lspci_err.$$)
    rc=$?
    err=$(grep -Ev "$KMOD_NOISE" /tmp/lspci_err.$$ || true)
    if [ $rc -ne 0 ]; then fail "$name" "lspci $opts exited $rc"; ok=0; fi
    if [ -n "$err" ]; then fail "$name" "lspci $opts wrote to stderr: $err"; ok=0; fi
    if grep -q "Unknown" <<<"$out"; then
      fail "$name" "lspci $opts printed 'Unknown': $(grep -m3 Unknown <<<"$out" | tr '\n' '|')"; ok=0
    fi
    if grep -q '!!!' <<<"$out"; then
      fail "$name" "lspci $opts complained: $(grep -m3 '!!!' <<<"$out" | tr '\n' '|')"; ok=0
    fi
    if [ $nonroot -eq 0 ] && grep -qi "access denied" <<<"$out"; then
      fail "$name" "lspci $opts printed 'access denied'"; ok=0
    fi
    case "$opts" in
      -nn|-D)
        n=$(grep -c . <<<"$out")
        if [ "$n" -ne "$ncfg" ]; then
          fail "$name" "lspci $opts lists $n devices but the tree has $ncfg config files"; ok=0
        fi ;;
      -vvv)
        ncap=$(grep -c $'^\tCapabilities: \[' <<<"$out")
        ndenied=$(grep -c $'^\tCapabilities: <access denied>' <<<"$out")
        if [ $nonroot -eq 0 ] && [ "$ncap" -eq 0 ]; then
          fail "$name" "lspci -vvv shows no capabilities at all"; ok=0
        fi
        if [ $nonroot -eq 1 ] && { [ "$ncap" -ne 0 ] || [ "$ndenied" -eq 0 ]; }; then
          fail "$name" "non-root fixture: expected only '<access denied>' capabilities (got $ncap decoded, $ndenied denied)"; ok=0
        fi ;;
    esac
  done
  rm -f /tmp/lspci_err.$$
  if [ $ok -eq 1 ]; then
    echo "ok   $name ($ncfg PCI functions$([ $nonroot -eq 1 ] && echo ', non-root view'))"
    passed=$((passed + 1))
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
