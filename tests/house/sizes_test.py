#!/usr/bin/env python3
"""Small pieces (issue 35): no source file over 500 lines, no function over 60 without a reason.

    tests/house/sizes_test.py [REPO]        check src/, include/, tools/ and tests/ (exit 1 naming each)
    tests/house/sizes_test.py --self-test   prove both checks fail on planted files

A C++ function in src/ longer than 60 lines needs a line "// Long: <why>" in the comment block just
above it. Test files still over 500 lines are listed in TEST_DEBT with the size they may not pass.
The function finder reads definitions that start at column 0 or 2 and end at their matching brace:
enough for this code base's clang-format style, not a C++ parser.
"""
import os
import re
import sys
import tempfile

from source_files import source_files

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 60
CHECKED = ("src", "include", "tools", "tests")
SUFFIXES = (".cc", ".h", ".py", ".sh")
# Test files not yet split: none may grow; each leaves the list when it is split.
TEST_DEBT = {}
HEAD = re.compile(r"^( ?| {2})(?!(?:if|for|while|switch|namespace|struct|class|enum|union|else|do|try|catch|return)\b)"
                  r"[^;=]*\([^;]*\)\s*(?:const\s*)?(?:override\s*)?(?:noexcept\s*)?(?:->\s*[\w:<>]+\s*)?\{\s*$")


def code_only(line, state):
    """The line without comments and string or character literals; `state` carries /* ... */."""
    out, i, n = [], 0, len(line)
    while i < n:
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"], i = False, end + 2
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"], i = True, i + 2
            continue
        c = line[i]
        if c in "\"'":
            if c == '"' and i > 0 and line[i - 1] == "R":
                break  # a raw string: its braces are text; the rest of the line is skipped
            i += 1
            while i < n and line[i] != c:
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def long_functions(lines):
    """(first line, length, signature) of each function body longer than MAX_FUNCTION_LINES."""
    found, state, i = [], {"block": False}, 0
    while i < len(lines):
        code = code_only(lines[i], state)
        if not HEAD.match(code):
            i += 1
            continue
        depth, j = 0, i
        while j < len(lines):
            code_j = code_only(lines[j], {"block": False})
            depth += code_j.count("{") - code_j.count("}")
            if depth <= 0:
                break
            j += 1
        if j - i - 1 > MAX_FUNCTION_LINES:
            found.append((i, j - i - 1, lines[i].strip()))
        i = j + 1
    return found


def has_reason(lines, first):
    """A "// Long: ..." line in the comment block right above line `first`."""
    k = first - 1
    while k >= 0 and lines[k].strip().startswith("//"):
        if lines[k].strip().startswith("// Long:"):
            return True
        k -= 1
    return False


def check(repo):
    problems, files = [], 0
    for rel, path in source_files(repo, CHECKED, SUFFIXES):
        files += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        count = len(lines) - (1 if lines and lines[-1] == "" else 0)
        limit = TEST_DEBT.get(rel, MAX_FILE_LINES)
        if count > limit:
            problems.append(f"{rel}: {count} lines (at most {limit}): split it by concern")
        if rel.startswith("src/") and rel.endswith(".cc"):
            for first, length, signature in long_functions(lines):
                if not has_reason(lines, first):
                    problems.append(f"{rel}:{first + 1}: a function of {length} lines (over "
                                    f"{MAX_FUNCTION_LINES}) without a '// Long: why' comment: {signature[:80]}")
    if files == 0:
        problems.append(f"no source files under {repo}")
    return files, problems


def self_test():
    with tempfile.TemporaryDirectory() as repo:
        os.makedirs(os.path.join(repo, "src", "model"))
        body = "".join(f"  x += {i};\n" for i in range(MAX_FUNCTION_LINES + 1))
        with open(os.path.join(repo, "src", "model", "a.cc"), "w") as f:
            f.write("// Why.\nint f(int x) {\n" + body + "  return x;\n}\n")
            f.write("// Long: one table, row by row.\nint g(int x) {\n" + body + "  return x;\n}\n")
            f.write("int h() {\n  return \"}\"[0] == '{';\n}\n")
        with open(os.path.join(repo, "src", "model", "big.h"), "w") as f:
            f.write("// x\n" * (MAX_FILE_LINES + 1))
        _, problems = check(repo)
        want = ["src/model/a.cc:2: a function of 62 lines", "src/model/big.h: 501 lines"]
        missing = [w for w in want if not any(p.startswith(w) for p in problems)]
        if missing or len(problems) != 2:
            print("sizes self-test FAILED: wanted exactly", want, "got", problems)
            return 1
    print("sizes self-test: a long function without a reason and a long file are both caught")
    return 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    repo = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    files, problems = check(repo)
    for p in problems:
        print(p)
    print(f"{files} files, {len(problems)} too long")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
