#!/usr/bin/env python3
"""A ~5 KB dump cannot push p2pcheck past 512 MiB (issue 15).

Each case is an archive of at most 6 KB that expands as far as the archive limits let it (just
under the 32 MiB where the 1000:1 compression-bomb check starts, so it is accepted) into the one
file a reader then turns into many small objects: a JSON manifest of millions of elements, a
/proc/mounts or /proc/modules of millions of lines, a cpuinfo, a udev database or an lspci dump
of millions of records. p2pcheck runs with its virtual memory capped at 512 MiB (ulimit -v
524288) and must end as the CLI ends on bad input or with a verdict: never killed, never the
last-resort "unexpected error" (std::bad_alloc), and within 60 s. Its peak resident size is
printed. tests/e2e/hostile_test.sh runs its generated inputs (the hard-link bomb among them) under the
same cap, but drops the cap for a build that cannot start under it; this test never does: a
binary that does not start under the cap (a sanitizer build) fails it.

    python3 tests/e2e/memory_limit_test.py BINARY
"""
import bz2
import lzma
import importlib.util
import os
import re
import resource
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_corpus", os.path.join(HERE, "hostile", "make-corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

LIMIT = 512 << 20
MAX_ARCHIVE = 6 * 1024
# Below kBombCheckBytes (32 MiB), so the expansion-ratio check does not refuse it by itself.
EXPANDED = 31 << 20


def cap():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run_capped(cmd, cwd, timeout=60):
    """(exit code or None on timeout, output, peak RSS in KiB) of `cmd` under the cap; wait4 gives
    this child's own peak, not the largest of all children."""
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:
            try:
                os.chdir(cwd)
                cap()
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                os.execv(cmd[0], cmd)
            finally:
                os._exit(127)
        deadline = time.monotonic() + timeout
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.wait4(pid, 0)
                return None, "", 0
            time.sleep(0.05)
        out.seek(0)
        return os.waitstatus_to_exitcode(status), out.read().decode(errors="replace"), usage.ru_maxrss


def repeated(unit, head=b"", tail=b""):
    return head + unit * ((EXPANDED - len(head) - len(tail)) // len(unit)) + tail


def packed(data):
    """bzip2, which packs runs of one line best and quickly; xz when that is smaller."""
    small = bz2.compress(data, 9)
    return small if len(small) <= MAX_ARCHIVE else min(small, lzma.compress(data, preset=9), key=len)


def root_with(path, data):
    members = [m for m in corpus.small_root() if m[0] != "root/" + path]
    return packed(corpus.tar_bytes(members + [("root/" + path, "file", data)]))


def cases():
    # (name, archive bytes, exit codes allowed, pattern the output must match)
    yield ("manifest-array.tar.bz2", root_with("manifest.json", repeated(b"0,", b"[", b"0]")), {5},
           r"manifest\.json: JSON of more than 1048576 values")
    yield ("kmod-json.tar.bz2", root_with("live/kmod.json", repeated(b"{},", b"[", b"{}]")), {5},
           r"/live/kmod\.json: JSON of more than 1048576 values")
    yield ("mounts.tar.bz2", root_with("proc/mounts", repeated(b"/dev/nvme0n1 /d xfs rw 0 0\n")), {5},
           r"/proc/mounts: [0-9]+ lines; no machine's has more than 100000")
    yield ("cpuinfo.tar.bz2", root_with("proc/cpuinfo", repeated(b"processor\t: 0\nvendor_id\t: AuthenticAMD\n\n")),
           {0, 1, 2, 4, 5}, r"")
    yield ("cmdline.tar.bz2", root_with("proc/cmdline", repeated(b"pci=disable_acs_redir=0000:00:01.0 ")), {0, 1, 2, 4, 5},
           r"")
    yield ("udev.txt.bz2", packed(repeated(b"P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\n"
                                           b"E: PCI_ID=8086:6F00\nE: PCI_SLOT_NAME=0000:00:00.0\n\n")), {0, 1, 2, 4, 5},
           r"")
    hexdump = "".join(f"{o:02x}: " + " ".join(["00"] * 16) + "\n" for o in range(0, 256, 16)).encode()
    yield ("lspci.txt.bz2", packed(repeated(b"00:00.0 Host bridge: Intel\n" + hexdump + b"\n")), {0, 1, 2, 4, 5}, r"")


def main():
    binary = os.path.realpath(sys.argv[1])
    if run_capped([binary, "--version"], ".")[0] != 0:
        sys.exit(f"FAIL: {binary} does not start under ulimit -v {LIMIT >> 10}; this test needs a build without "
                 "sanitizers (their shadow memory does not fit)")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, codes, pattern in cases():
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            rc, out, peak = run_capped([binary, "--color", "never", "--dump", path, "check"], tmp)
            if rc is None:
                print(f"FAIL {name}: still running after 60 s")
                failed += 1
                continue
            problems = []
            if len(data) > MAX_ARCHIVE:
                problems.append(f"the archive is {len(data)} bytes, more than {MAX_ARCHIVE}")
            if rc not in codes:
                problems.append(f"exit {rc}, wanted one of {sorted(codes)}")
            if "unexpected error" in out or "bad_alloc" in out:
                problems.append("ran out of memory (the CLI's last-resort handler answered)")
            if not re.search(pattern, out):
                problems.append(f"output lacks /{pattern}/")
            size = f"{len(data)} B -> {EXPANDED >> 20} MiB"
            rss = f"peak RSS {peak >> 10} MiB"
            if problems:
                failed += 1
                print(f"FAIL {name} ({size}): " + "; ".join(problems))
                print("    " + out.strip().splitlines()[-1][:200] if out.strip() else "    (no output)")
            else:
                passed += 1
                print(f"ok   {name} ({size}, exit {rc}, {rss})")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
