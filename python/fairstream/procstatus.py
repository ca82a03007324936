"""This process's memory figures from ``/proc/self/status`` (Linux), for the benchmark children.

Kept to the standard library's ``open`` so that importing it costs a benchmark child nothing.
"""

from __future__ import annotations


def status_kib(field: str) -> int | None:
    """The value of `field` (``VmRSS``, ``VmHWM``, ...) in KiB, or None where /proc is absent."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None
