#!/usr/bin/env bash
# p2pcheck(1) covers --help: every option that any --help lists (the top level, each command, kmod's
# subcommands) is in that command's part of the page, every command has its section and an example,
# every exit code of cli/options.h is described, and groff formats the page without a warning.
# Also that the generator refuses a template that lost a command or an example.
# Usage: packaging/tests/manpage_test.sh BINARY PAGE   (PAGE: build/packaging/p2pcheck.1, roff)
set -u
bin=$1 page=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0 checked=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
[ -s "$page" ] || { echo "FAIL no man page at $page (build the p2pcheck_manpage target)"; exit 1; }

# The page as text: \- is -, font changes dropped.
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(en/–/g' "$page" > "$tmp/page"
# section NAME: the lines of `.SH NAME` (top level) or `.SS "p2pcheck NAME"` up to the next heading.
section() {
  awk -v want="$1" '
    /^\.S[HS] / { inside = ($0 == want) ; next }
    inside' "$tmp/page"
}

# help PATH...: the options and subcommands `p2pcheck PATH --help` lists.
help_options() { "$bin" "$@" --help | awk '/^[^ ].*:$/ { part = $0; next } part == "Options:" && /^  -/ { print $1 }' | tr ',' '\n' | sed 's/\[=.*\]$//'; }  # --json[=pretty]: an optional value
help_commands() { "$bin" "$@" --help | awk '/^[^ ].*:$/ { part = $0; next } part == "Subcommands:" && /^  [a-z]/ { print $1 }'; }

check_command() {  # check_command PATH...
  local path="$*" heading text opt
  if [ -z "$path" ]; then heading=".SH OPTIONS"; else heading=".SS \"p2pcheck $path\""; fi
  text=$(section "$heading")
  [ -n "$text" ] || { fail "no section '$heading' for 'p2pcheck $path'"; return; }
  for opt in $(help_options "$@"); do
    # Each command's -h,--help is listed once, among the global options.
    if [ -n "$path" ] && { [ "$opt" = -h ] || [ "$opt" = --help ]; }; then continue; fi
    checked=$((checked + 1))
    grep -qE -- "(^|[ ,])$opt([ ,=[]|$)" <<<"$text" || fail "'p2pcheck $path --help' lists $opt; the page's '$heading' does not"
  done
  if [ -n "$path" ]; then
    # The examples --help ends with are examples of the page's too, word for word.
    local example
    while IFS= read -r example; do
      checked_examples=$((checked_examples + 1))
      grep -qxF -- "$example" "$tmp/examples" || fail "'p2pcheck $path --help' shows '$example'; the page's examples do not"
    done < <("$bin" "$@" --help | awk '/^Examples:$/ { ex = 1; next } /^$/ { ex = 0 } ex' | sed 's/^  //')
    # An example between .EX and .EE that runs this command.
    awk '/^\.EX$/ { ex = 1; next } /^\.EE$/ { ex = 0 } ex' <<<"$text" | grep -qE "p2pcheck( .*)? $path( |$)" ||
      fail "section 'p2pcheck $path' has no example running it"
  fi
  local sub
  for sub in $(help_commands "$@"); do check_command "$@" "$sub"; done
}
awk '/^\.EX$/ { ex = 1; next } /^\.EE$/ { ex = 0 } ex' "$tmp/page" > "$tmp/examples"
checked_examples=0
check_command
[ "$checked_examples" -ge 11 ] || fail "only $checked_examples examples found in the --help texts"
[ "$checked" -ge 30 ] || fail "only $checked options found in the --help texts: did their format change?"

# Exit codes: each kExit* value of src/cli/options.h is a .TP entry of EXIT STATUS.
exits=$(section ".SH \"EXIT STATUS\""; section ".SH EXIT STATUS")
codes=$(sed -nE 's/^ *kExit[A-Za-z]+ = ([0-9]+),.*/\1/p' "$src/src/cli/options.h")
[ "$(wc -w <<<"$codes")" -ge 6 ] || fail "cannot read the exit codes of src/cli/options.h"
for code in $codes; do
  grep -qx "\.B $code" <<<"$exits" || fail "exit code $code (src/cli/options.h) is not in EXIT STATUS"
done

if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z -k "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about the page: $warnings"
else
  fail "groff not installed (groff-base; scripts/setup-deps.sh installs it)"
fi

# The generator's guards: a template that lost a command's section or its example fails.
template=$src/src/cli/p2pcheck.1.in
grep -v '^@COMMAND topo@$' "$template" > "$tmp/no-topo.in"
out=$("$bin" --man-page "$tmp/no-topo.in" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] && grep -q "no @COMMAND topo@ line" <<<"$out" || fail "a template without topo: exit $rc, '$out'"
awk '/^@COMMAND paths@$/ { p = 1 } /^@COMMAND capture@$/ { p = 0 } p && /^p2pcheck / { next } { print }' "$template" > "$tmp/no-example.in"
out=$("$bin" --man-page "$tmp/no-example.in" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] && grep -q "p2pcheck paths. has no example" <<<"$out" || fail "a section without example: exit $rc, '$out'"
{ cat "$template"; printf '@COMMAND frobnicate@\n'; } > "$tmp/unknown.in"
out=$("$bin" --man-page "$tmp/unknown.in" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] && grep -q "no such command" <<<"$out" || fail "an unknown command: exit $rc, '$out'"
# A SYNOPSIS that leaves a command out (watch was once missing from it).
grep -v 'fBwatch\\fR' "$template" > "$tmp/no-watch-synopsis.in"
out=$("$bin" --man-page "$tmp/no-watch-synopsis.in" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] && grep -q "SYNOPSIS: no line for .p2pcheck watch." <<<"$out" || fail "a synopsis without watch: exit $rc, '$out'"
# The build's page is what the binary makes of the template now.
"$bin" --man-page "$template" > "$tmp/now.1" || fail "--man-page $template failed"
cmp -s "$tmp/now.1" "$page" || fail "$page is not what the binary makes of $template now (rebuild)"

[ "$failed" -eq 0 ] && echo "manpage: ok ($checked options of --help found in their sections)"
[ "$failed" -eq 0 ]
