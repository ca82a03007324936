"""Runs one command and reports its wall time and peak memory, for `fairstream bench`.

``python -I -S bench_timer.py REPORT -- COMMAND [ARG ...]`` (run by path, isolated, without
site: this process stays a few MB) starts COMMAND with this process's stdin, stdout and stderr,
waits for it and writes ``{"wall_s", "exit_code", "maxrss_kib"}`` as JSON to the file REPORT. It
exits with COMMAND's exit code.

Why a separate process: on Linux a child's ``ru_maxrss`` includes the resident size of the
address space it was spawned from (the parent's, shared until ``exec``). Measured from
`fairstream bench`, whose process may hold hundreds of MB (pytest, an earlier ns-3 import), that
floor would hide the child's own peak; spawned from this small process, the floor is this
process's few MB. The wall time runs from just before the spawn to the child's exit.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: bench_timer.py REPORT -- COMMAND [ARG ...]\n")
        return 2
    report, command = argv[0], argv[2:]
    started = time.perf_counter()
    pid = os.posix_spawn(command[0], command, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux and in bytes on macOS.
    maxrss_kib = usage.ru_maxrss / 1024 if sys.platform == "darwin" else usage.ru_maxrss
    with open(report, "w", encoding="utf-8") as out:
        json.dump({"wall_s": wall, "exit_code": code, "maxrss_kib": maxrss_kib}, out)
    return code if code >= 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
