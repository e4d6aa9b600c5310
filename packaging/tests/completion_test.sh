#!/usr/bin/env bash
# Drives packaging/bash-completion/p2pcheck as bash would (COMP_WORDS split at spaces, ':' and '=',
# COMP_CWORD, COMP_LINE, COMP_POINT; bash-completion's helpers loaded): commands, every option each
# --help lists, option values, PCI addresses and NVMe names of a fixture (--root) and of this machine.
# Usage: packaging/tests/completion_test.sh BINARY TREES   (TREES: the generated fixtures)
set -u
bin=$1 trees=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$trees/epyc-mi300x-8gpu/root
[ -d "$root/sys" ] || { echo "FAIL no generated fixture at $root"; exit 1; }
[ -f /usr/share/bash-completion/bash_completion ] ||
  { echo "FAIL bash-completion is not installed (scripts/setup-deps.sh installs it)"; exit 1; }
# shellcheck disable=SC1091
source /usr/share/bash-completion/bash_completion
# shellcheck disable=SC1091
source "$here/../bash-completion/p2pcheck"
failed=0 checks=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# complete LINE: what TAB at the end of LINE offers, one per line, sorted.
complete() {
  local line=$1 word
  COMP_WORDS=()
  for word in $line; do
    # readline breaks words at ':' and '=' too, each its own word.
    while [[ $word =~ ^([^:=]*)([:=])(.*)$ ]]; do
      [ -n "${BASH_REMATCH[1]}" ] && COMP_WORDS+=("${BASH_REMATCH[1]}")
      COMP_WORDS+=("${BASH_REMATCH[2]}")
      word=${BASH_REMATCH[3]}
    done
    [ -n "$word" ] && COMP_WORDS+=("$word")
  done
  [[ $line == *" " || $line == *[:=] ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  _p2pcheck p2pcheck "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  # An empty candidate stays visible (as "<empty>"): bash would offer it.
  for word in "${COMPREPLY[@]}"; do printf '%s\n' "${word:-<empty>}"; done | sort -u
}
# expect NAME LINE WORD...: TAB on LINE offers exactly these words.
expect() {
  local name=$1 line=$2 got want
  shift 2
  checks=$((checks + 1))
  got=$(complete "$line")
  want=$(printf '%s\n' "$@" | sort -u | sed '/^$/d')
  [ "$got" = "$want" ] || fail "$name: '$line<TAB>' offers [$(echo $got)], wanted [$(echo $want)]"
}
# offers NAME LINE WORD...: TAB on LINE offers at least these words.
offers() {
  local name=$1 line=$2 got w
  shift 2
  checks=$((checks + 1))
  got=$(complete "$line")
  for w in "$@"; do grep -qxF -- "$w" <<<"$got" || fail "$name: '$line<TAB>' does not offer $w (offers: $(echo $got))"; done
}

# Every option of every --help, after its command (global options are valid after any command).
help_options() { "$bin" "$@" --help | awk '/^[A-Za-z]+:$/ { part = $0; next } part == "Options:" && /^  -/ { print $1 }' | tr ',' '\n' | sed 's/{.*}$//; s/\[=.*\]$//'; }  # --json{compact}, --json[=pretty]: a value, not part of the name
help_commands() { "$bin" "$@" --help | awk '/^[A-Za-z]+:$/ { part = $0; next } part == "Subcommands:" && /^  [a-z]/ { print $1 }'; }
global=$(help_options)
cover() {
  local sub
  # shellcheck disable=SC2046
  offers "options of 'p2pcheck $*'" "p2pcheck $* -" $(help_options "$@") $global
  for sub in $(help_commands "$@"); do cover "$@" "$sub"; done
}
cover
# shellcheck disable=SC2046
expect commands "p2pcheck " $(help_commands)
# shellcheck disable=SC2046
expect kmod_commands "p2pcheck kmod " $(help_commands kmod)
expect command_prefix "p2pcheck ca" capture
expect after_an_option_value "p2pcheck --color never ex" explain
expect color "p2pcheck --color " auto always never
expect color_equals "p2pcheck --color=al" always
expect engine "p2pcheck verify --engine " auto hipfile kmod p2pmem
expect direction "p2pcheck verify --direction to-" to-device to-storage
expect numbers "p2pcheck verify --size "
expect fail_on "p2pcheck check --fail-on " refused stack unknown warn
expect what_if_release "p2pcheck --what-if-kernel "

# Devices of the fixture, as its topology names them.
topo=$("$bin" --root "$root" topo --json)
gpus=$(python3 -c 'import json,sys; print(*json.load(sys.stdin)["gpus"])' <<<"$topo")
nvmes=$(python3 -c 'import json,sys; print(*[n["name"] for n in json.load(sys.stdin)["nvme"]])' <<<"$topo")
namespaces=$(python3 -c 'import json,sys; print(*[s["name"] for n in json.load(sys.stdin)["nvme"] for s in n["namespaces"]])' <<<"$topo")
nvme_bdfs=$(python3 -c 'import json,sys; print(*[n["bdf"] for n in json.load(sys.stdin)["nvme"]])' <<<"$topo")
[ "$(wc -w <<<"$gpus")" -eq 8 ] && [ "$(wc -w <<<"$nvmes")" -eq 9 ] || fail "fixture topology: gpus [$gpus] nvme [$nvmes]"
# The GPU side: display and accelerator functions (the 8 GPUs and the BMC's VGA here).
display=$(cd "$root/sys/bus/pci/devices" && grep -lE '^0x(03|12)' ./*/class | cut -d/ -f2)
# shellcheck disable=SC2086
expect gpu_bdfs "p2pcheck --root $root --gpu " $display
# shellcheck disable=SC2086
offers gpus_of_topo "p2pcheck --root $root --gpu " $gpus
# shellcheck disable=SC2086
expect nvme_names_and_bdfs "p2pcheck --root $root check --nvme " $nvmes $namespaces $nvme_bdfs
# shellcheck disable=SC2086
expect nvme_names "p2pcheck --root $root --nvme nvme" $nvmes $namespaces
expect nvme_dev "p2pcheck --root $root --nvme /dev/nvme1" /dev/nvme1n1
# shellcheck disable=SC2086
expect explain_gpu "p2pcheck --root $root explain " $display
# shellcheck disable=SC2086
expect explain_nvme "p2pcheck --root $root explain 0000:03:00.0 " $nvmes $namespaces $nvme_bdfs
expect explain_done "p2pcheck --root $root explain 0000:03:00.0 nvme0 "
# bash replaces only the word after the last ':' (COMP_WORDBREAKS), so that is what is offered.
expect gpu_after_colon "p2pcheck --root $root --gpu 0000:43:0" 00.0
expect gpu_domain "p2pcheck --root $root --gpu 0000:" $(sed 's/^0000://' <<<"$display")
# Short addresses when one is being typed; a comma-separated list completes its last item.
expect gpu_short "p2pcheck --root $root --gpu 4" 43:00.0 44:00.0
expect gpu_list "p2pcheck --root $root --gpu 43:00.0,c" 00.0,c3:00.0 00.0,c4:00.0
expect nvme_list "p2pcheck --root $root --nvme nvme0,nvme8" nvme0,nvme8 nvme0,nvme8n1
raw=$(python3 -c 'import json,sys; print(*["/dev/" + d for n in json.load(sys.stdin)["nvme"] for s in n["namespaces"] for d in [s["name"]] + s["partitions"]])' <<<"$topo")
# shellcheck disable=SC2086
expect raw_devices "p2pcheck --root $root verify --raw /dev/" $raw

# A dump or a plan on the line: p2pcheck lists its devices (--complete), the plan's names first.
# The completion runs the p2pcheck that the line names, found on PATH as bash would.
PATH="$(cd "$(dirname "$bin")" && pwd):$PATH"
src=$(cd "$here/../.." && pwd)
names_of() {  # names_of INPUT-OPTIONS... -> "gpus|nvme names, namespaces and addresses" from topo --json
  "$bin" "$@" topo --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
print(*t["gpus"], sep=" ", end="|")
print(*[n["name"] for n in t["nvme"] if n["name"]], *[s["name"] for n in t["nvme"] for s in n["namespaces"]],
      *[n["bdf"] for n in t["nvme"]])'
}
plan=$src/fixtures/plans/xeon-broadwell-switch-acs.toml
IFS='|' read -r plan_gpus plan_nvmes <<<"$(names_of --plan "$plan")"
# shellcheck disable=SC2086
expect plan_gpu "p2pcheck --plan $plan --gpu " gpu0 gpu1 $plan_gpus
# shellcheck disable=SC2086
expect plan_nvme "p2pcheck --plan $plan check --nvme " $plan_nvmes
expect plan_names_typed "p2pcheck --plan $plan explain gp" gpu0 gpu1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dump=$tmp/epyc.tar.zst
"$bin" --root "$root" capture -o "$dump" 2>/dev/null || fail "capture of $root"
IFS='|' read -r dump_gpus dump_nvmes <<<"$(names_of --dump "$dump")"
[ "$(wc -w <<<"$dump_gpus")" -eq 8 ] && [ -n "$dump_nvmes" ] || fail "the capture shows [$dump_gpus] [$dump_nvmes]"
# shellcheck disable=SC2086
expect dump_gpu "p2pcheck --dump $dump --gpu " $dump_gpus
# shellcheck disable=SC2086
expect dump_explain_nvme "p2pcheck --dump $dump explain ${dump_gpus%% *} " $dump_nvmes
# An unreadable dump offers nothing rather than this machine's devices.
expect dump_unreadable "p2pcheck --dump /does/not/exist --gpu "

# This machine: with no GPU-class device the GPU side offers every PCI function (any may stand in).
live=$(ls /sys/bus/pci/devices 2>/dev/null)
if [ -n "$live" ]; then
  shown=$(complete "p2pcheck --gpu ")
  live_gpus=$(cd /sys/bus/pci/devices && grep -lE '^0x(03|12)' ./*/class 2>/dev/null | cut -d/ -f2)
  want=$(sort <<<"${live_gpus:-$live}")
  checks=$((checks + 1))
  [ "$shown" = "$want" ] || fail "live --gpu: offers [$(echo $shown)], wanted [$(echo $want)]"
fi

# Installed where bash-completion looks for it on demand.
checks=$((checks + 1))
grep -q 'complete -F _p2pcheck p2pcheck' "$here/../bash-completion/p2pcheck" || fail "no complete -F line"
[ "$failed" -eq 0 ] && echo "bash completion: $checks checks ok"
[ "$failed" -eq 0 ]
