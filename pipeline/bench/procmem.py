"""Peak memory of a process as the bench reports it: the process's own high-water mark.

``ru_maxrss`` is wrong for a child started by ``subprocess``: at ``exec`` Linux keeps the
high-water mark of the forked copy of the parent, so a child of a 300 MB parent reports about
300 MB whatever it uses itself. ``VmHWM`` in ``/proc/PID/status`` belongs to the process's
own address space after ``exec``. Off Linux, :func:`peak_kb` falls back to ``ru_maxrss``.

The CPU a child has used so far (:func:`cpu_seconds`, e.g. a server the bench calls over stdio)
is read from ``/proc/PID/stat`` while it runs: the bench's own ``time.process_time`` counts only
its own process.
"""

from __future__ import annotations

import os
import resource
import threading
from collections.abc import Iterator
from pathlib import Path


def hwm_kb(pid: int | str = "self") -> int:
    """``VmHWM`` of ``pid`` in KiB, 0 when it cannot be read (gone, or not Linux)."""
    try:
        with Path(f"/proc/{pid}/status").open(encoding="ascii") as status:
            peaks = [int(line.split()[1]) for line in status if line.startswith("VmHWM:")]
    except (OSError, ValueError):
        return 0
    return max(peaks, default=0)


def peak_kb() -> int:
    """This process's own peak RSS in KiB."""
    return hwm_kb() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _cmdline(pid: int | str) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


def _children() -> Iterator[str]:
    """This process's children that have started their own program: a child caught between
    fork and exec still runs our command line, and its high-water mark is our memory."""
    ours = _cmdline("self")
    for tasks in Path("/proc/self/task").glob("*/children"):
        for pid in tasks.read_text(encoding="ascii").split():
            if _cmdline(pid) != ours:
                yield pid


def child_pids() -> set[str]:
    """The pids of this process's children that run their own program (:func:`_children`)."""
    return set(_children())


def cpu_seconds(pid: int | str = "self") -> float | None:
    """User plus system CPU seconds ``pid`` has used, all its threads (``/proc/PID/stat``, in
    clock ticks: 10 ms); None when it cannot be read (gone, or not Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
        fields = stat.rsplit(")", 1)[1].split()  # after "(comm)", which may hold spaces
        ticks = int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, IndexError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


class ChildPeaks:
    """The largest own peak of any child process, sampled every ``every`` seconds until
    :meth:`stop` (a child's ``VmHWM`` can only be read while it runs). Off Linux it stays 0
    and :meth:`stop` returns ``ru_maxrss`` of the waited-for children instead."""

    def __init__(self, every: float = 0.2) -> None:
        self.peak = 0
        self._every = every
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            for pid in _children():
                self.peak = max(self.peak, hwm_kb(pid))
            self._done.wait(self._every)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak or resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
