"""The bench's peak memory is each process's own, not what a child inherits at exec."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.bench.procmem import ChildPeaks, hwm_kb, peak_kb

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
