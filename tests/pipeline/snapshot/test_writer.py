"""The writer process: ordered calls, errors carried back, no survivor after a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from audit.errors import InputError
from pipeline.errors import SnapshotError
from pipeline.snapshot.store import limit_memory, snapshot_totals
from pipeline.snapshot.writer import WriterProcess
from tests.conftest import ROOT
from tests.pipeline.snapshot import writer_ops


@pytest.fixture(autouse=True)
def importable_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child imports ``tests.pipeline.snapshot.writer_ops`` by name, from the root."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


def gone(pid: int, within: float = 10.0) -> bool:
    """True once ``pid`` has exited (a zombie nobody reaps counts as exited)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_queued_work_runs_in_order_and_call_returns_the_result(tmp_path: Path) -> None:
    with WriterProcess(tmp_path / "db.duckdb") as db:
        db.call(writer_ops.create_numbers)
        for n in (3, 1, 2):
            db.submit(writer_ops.add_number, n)  # returns before the insert has run
        assert db.call(writer_ops.numbers) == [1, 2, 3]
        pid = db.pid
    assert gone(pid)


def test_the_writer_runs_this_pipeline_even_from_a_folder_holding_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    impostor = tmp_path / "pipeline"
    (impostor / "snapshot").mkdir(parents=True)
    (impostor / "__init__.py").write_text("raise ImportError('the wrong pipeline')\n")
    (impostor / "snapshot" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH")
    with WriterProcess(tmp_path / "db.duckdb") as db:
        db.call(writer_ops.create_numbers)
        db.submit(writer_ops.add_number, 7)
        assert db.call(writer_ops.numbers) == [7]


def test_reopen_keeps_the_data_and_replays_the_settings(tmp_path: Path) -> None:
    with WriterProcess(tmp_path / "db.duckdb") as db:
        db.configure(writer_ops.set_threads, 1)
        db.call(writer_ops.create_numbers)
        db.submit(writer_ops.add_number, 4)
        db.submit(writer_ops.set_threads, 3)  # a plain call: not replayed
        db.reopen()
        assert db.call(writer_ops.numbers) == [4]
        assert db.call(writer_ops.threads) == 1


def test_a_failed_message_raises_at_the_next_call_and_the_rest_is_skipped(
    tmp_path: Path,
) -> None:
    with pytest.raises(SnapshotError) as caught, WriterProcess(tmp_path / "db.duckdb") as db:
        db.call(writer_ops.create_numbers)
        db.submit(writer_ops.add_number, "not a number")
        db.submit(writer_ops.add_number, 5)
        db.call(writer_ops.numbers)
    assert caught.value.message.startswith("snapshot database error: Conversion Error:")
    assert gone(db.pid)


def test_a_project_error_comes_back_as_itself(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught, WriterProcess(tmp_path / "db.duckdb") as db:
        db.call(writer_ops.refuse, "lots")
    assert (caught.value.message, caught.value.advice) == (
        "cannot use 'lots'",
        "pass another value",
    )


def test_the_memory_limit_is_the_one_the_caller_passes_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITESEAL_BUILD_MEMORY", "lots")  # read by Settings, not the writer
    with WriterProcess(tmp_path / "db.duckdb") as db:
        db.configure(limit_memory, tmp_path / "work", memory="96MB")
        assert db.call(writer_ops.setting, "memory_limit") == "91.5 MiB"


def test_a_database_error_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError) as caught, WriterProcess(tmp_path / "db.duckdb") as db:
        db.call(snapshot_totals)  # no tables yet
    assert caught.value.message == (
        "snapshot database error: Catalog Error: Table with name record_state does not exist!"
    )


def test_a_writer_that_dies_is_reported_not_waited_for(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError) as caught, WriterProcess(tmp_path / "db.duckdb") as db:
        db.submit(writer_ops.long_statement)
        os.kill(db.pid, signal.SIGKILL)
        db.drain()
    assert caught.value.message == "the snapshot writer process stopped unexpectedly (signal 9)"
    assert caught.value.advice == (
        "run the build again; it resumes from the responses already fetched"
    )


def test_ctrl_c_is_left_to_the_parent(tmp_path: Path) -> None:
    with WriterProcess(tmp_path / "db.duckdb") as db:
        db.call(writer_ops.create_numbers)
        os.kill(db.pid, signal.SIGINT)  # what a terminal sends to the whole process group
        db.call(writer_ops.add_number, 7)
        assert db.call(writer_ops.numbers) == [7]


def test_an_exception_in_the_parent_kills_the_writer_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), WriterProcess(tmp_path / "db.duckdb") as db:
        db.submit(writer_ops.long_statement)
        raise KeyboardInterrupt
    assert gone(db.pid, within=0.1)
    assert time.monotonic() - started < 10


PARENT = """
import sys
from pathlib import Path
from pipeline.snapshot.writer import WriterProcess
from tests.pipeline.snapshot import writer_ops
db = WriterProcess(Path(sys.argv[1]))
db.submit(writer_ops.long_statement)
print(db.pid, flush=True)
sys.stdin.read()
"""


def test_the_writer_exits_when_its_parent_is_killed_even_mid_statement(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path / "db.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    ) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        time.sleep(0.3)  # the long statement is running
        assert not gone(child, within=0)
        parent.kill()
    assert gone(child)
