"""audit.locking: one flock mechanism; busy is reported, a platform without fcntl fails closed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import audit.locking
from audit.keys import create_key_file, read_key_file, rotate_key_file
from audit.locking import LocksUnavailableError, hold, require_locks
from pipeline.site.swap import exclusive
from pipeline.snapshot.folder import corpus_lock

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def descriptors(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """Two open file descriptions of one lock file (flock conflicts between them)."""
    path = tmp_path / "lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    second = os.open(path, os.O_RDWR)
    yield first, second
    os.close(first)
    os.close(second)


@pytest.fixture
def no_fcntl(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process behaves as on a platform without the fcntl module."""
    monkeypatch.setattr(audit.locking, "_fcntl", lambda: None)


def test_a_second_holder_is_told_the_lock_is_busy(descriptors: tuple[int, int]) -> None:
    first, second = descriptors
    with hold(first, what="x", wait=False) as held:
        assert held is True
        with hold(second, what="x", wait=False) as other:
            assert other is False


def test_the_lock_is_released_when_the_block_ends(descriptors: tuple[int, int]) -> None:
    first, second = descriptors
    with hold(first, what="x", wait=True) as held:
        assert held is True
    with hold(second, what="x", wait=False) as again:
        assert again is True


def test_without_fcntl_a_lock_fails_closed_with_one_line(no_fcntl: None) -> None:
    with pytest.raises(LocksUnavailableError) as caught, hold(0, what="doing X", wait=True):
        pytest.fail("the block ran without a lock")
    assert caught.value.message == (
        "doing X needs an exclusive file lock, and this platform has no flock (fcntl)"
    )
    assert caught.value.advice == "run this command on Linux or macOS"
    assert caught.value.exit_code == 2
    with pytest.raises(LocksUnavailableError):
        require_locks("doing X")


def test_without_fcntl_a_snapshot_build_stops_before_building(
    tmp_path: Path, no_fcntl: None
) -> None:
    with pytest.raises(LocksUnavailableError) as caught, corpus_lock(tmp_path):
        pytest.fail("the build ran without a lock")
    assert caught.value.message == (
        f"building a snapshot of {tmp_path} needs an exclusive file lock, "
        "and this platform has no flock (fcntl)"
    )


def test_without_fcntl_a_site_build_stops_and_touches_nothing(
    tmp_path: Path, no_fcntl: None
) -> None:
    with pytest.raises(LocksUnavailableError) as caught, exclusive(tmp_path):
        pytest.fail("the site build ran unserialised")
    assert caught.value.message == (
        f"building a site into {tmp_path} needs an exclusive file lock, "
        "and this platform has no flock (fcntl)"
    )
    assert list(tmp_path.iterdir()) == []


def test_without_fcntl_key_rotation_stops_and_the_key_file_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "key.json"
    keyring = create_key_file(path)
    before = path.read_bytes()
    monkeypatch.setattr(audit.locking, "_fcntl", lambda: None)
    with pytest.raises(LocksUnavailableError) as caught:
        rotate_key_file(path)
    assert caught.value.message == (
        f"changing key file {path} needs an exclusive file lock, "
        "and this platform has no flock (fcntl)"
    )
    assert path.read_bytes() == before
    assert read_key_file(path).fingerprint == keyring.fingerprint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.json"]  # no lock file made


IMPORT_EVERYTHING_WITHOUT_FCNTL = """
import pkgutil, sys
sys.modules["fcntl"] = None  # import fcntl now raises ImportError, as on Windows
import audit, pipeline
names = [
    info.name
    for package in (audit, pipeline)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    if not info.name.endswith("__main__")
]
for name in names:
    __import__(name)
print(len(names))
sys.argv = ["citeseal", "--help"]
from pipeline.cli import main
main()
"""


def test_every_module_and_the_cli_import_on_a_platform_without_fcntl() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING_WITHOUT_FCNTL],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    count, usage = done.stdout.split("\n", 1)
    assert int(count) > 100  # every module of both packages was imported
    assert usage.startswith("Usage: citeseal [OPTIONS] COMMAND [ARGS]...")
