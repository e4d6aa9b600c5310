#!/usr/bin/env python3
"""bench/cputime.py OUT ERR TIMEOUT CMD...: runs CMD with stdout to OUT and stderr to ERR, and prints
one line: wall seconds, user seconds, system seconds, peak RSS in KiB, exit code.

GNU time prints CPU time to 10 ms, and a command of 0.1 s moved its ratio by 0.1-0.3 between runs:
wait4() gives user and system time to the microsecond. The peak RSS is still GNU time's: a child
forked from Python starts with Python's pages mapped, and wait4's ru_maxrss would count them, where
GNU time forks the command from its own small process. Its CPU (about 1 ms) is in the figures. The
exit code is the shell's: 128 + N for a signal, 124 when TIMEOUT seconds passed and the command
was killed (as timeout(1)).
"""
import os
import signal
import subprocess
import sys
import threading
import time


def main() -> int:
    if len(sys.argv) < 5:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 3
    out_path, err_path, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rss_path = out_path + ".rss"
    command = ["/usr/bin/time", "-f", "%M", "-o", rss_path, "--", *sys.argv[4:]]
    timed_out = threading.Event()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.monotonic()
        try:
            # A group of its own: the timeout kills GNU time and the command below it.
            child = subprocess.Popen(command, stdout=out, stderr=err, start_new_session=True)
        except OSError as e:
            print(f"cputime.py: cannot run {command[0]}: {e.strerror}", file=sys.stderr)
            return 127

        def kill() -> None:
            timed_out.set()
            os.killpg(child.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        except KeyboardInterrupt:  # run.sh interrupted: the command's own group got no signal
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ^C must not leave it running
            os.killpg(child.pid, signal.SIGKILL)
            os.wait4(child.pid, 0)
            return 130
        finally:
            timer.cancel()
        wall = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    code = child.returncode if child.returncode >= 0 else 128 - child.returncode
    rss = "0"
    try:
        with open(rss_path) as f:
            # The RSS, after a "Command terminated by signal N" line when it was killed. GNU time
            # exits with the command's status, so wait4's is the command's.
            words = f.read().split()
        if words and words[-1].isdigit():
            rss = words[-1]
        os.unlink(rss_path)
    except OSError:
        pass
    if timed_out.is_set():
        code = 124
    print(f"{wall:.6f} {usage.ru_utime:.6f} {usage.ru_stime:.6f} {rss} {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
