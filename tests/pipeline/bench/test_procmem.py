"""The bench's peak memory is each process's own, not what a child inherits at exec."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.bench.procmem import ChildPeaks, child_pids, cpu_seconds, hwm_kb, peak_kb

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")


def test_a_child_of_a_large_parent_reports_its_own_peak_not_the_parent_s() -> None:
    ballast = bytearray(300 * 1024 * 1024)  # the parent holds 300 MiB when the child starts
    ballast[::4096] = b"x" * len(ballast[::4096])  # touched, so it is resident
    assert peak_kb() >= 300 * 1024
    sampler = ChildPeaks(every=0.05)
    child = (
        "import time; x = bytearray(40 * 1024 * 1024); x[::4096] = b'y' * len(x[::4096]); "
        "time.sleep(0.8)"
    )
    subprocess.run([sys.executable, "-c", child], check=True)
    peak = sampler.stop()
    assert 40 * 1024 <= peak < 150 * 1024  # its 40 MiB and an interpreter, not the 300 MiB
    inherited = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert inherited >= 300 * 1024  # what ru_maxrss says of the same child
    del ballast


def test_a_process_that_is_gone_has_no_peak() -> None:
    assert hwm_kb(2**22 + 7) == 0


def test_a_child_s_cpu_is_read_while_it_runs_and_a_process_that_is_gone_has_none() -> None:
    before = child_pids()
    busy = (  # spins 0.3 s of CPU, says so, then waits for its input to close
        "import sys, time\n"
        "end = time.process_time() + 0.3\n"
        "while time.process_time() < end: pass\n"
        "print(flush=True)\n"
        "sys.stdin.read()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", busy], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()  # it has spun 0.3 s of CPU and now waits
        [pid] = child_pids() - before
        assert int(pid) == child.pid
        used = cpu_seconds(pid)
        assert used is not None and 0.25 <= used < 5  # clock ticks: 10 ms each
    finally:
        child.communicate(b"")
    assert cpu_seconds(child.pid) is None
    ours = cpu_seconds()
    assert ours is not None and ours > 0
