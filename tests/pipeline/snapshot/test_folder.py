"""Snapshot stamps (pipeline.snapshot.folder.free_stamp): unique in the corpus folder, and
always later than the parent's, wherever the parent lies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pipeline.snapshot.folder import free_stamp

NOON = datetime(2026, 12, 2, 12, 0, 0, 400_000, tzinfo=UTC)


def test_a_stamp_is_the_second_now_or_the_next_one_free_in_the_folder(tmp_path: Path) -> None:
    assert free_stamp(tmp_path, "demo", lambda: NOON) == "20261202T120000Z"
    (tmp_path / "demo-20261202T120000Z.duckdb").touch()
    (tmp_path / "demo-20261202T120001Z.duckdb").touch()
    assert free_stamp(tmp_path, "demo", lambda: NOON) == "20261202T120002Z"


def test_a_child_built_within_its_parents_second_elsewhere_gets_a_later_stamp(
    tmp_path: Path,
) -> None:
    # the parent in another folder, stamped this very second: sharing its id would make the
    # audit read the parent's harvest as the child's (and drop not_refreshed flags)
    parent = tmp_path / "archive" / "demo-20261202T120000Z.duckdb"
    child_folder = tmp_path / "corpus"
    assert free_stamp(child_folder, "demo", lambda: NOON, after=parent) == "20261202T120001Z"
    later = tmp_path / "archive" / "demo-20261202T130000Z.duckdb"  # a clock behind the parent's
    assert free_stamp(child_folder, "demo", lambda: NOON, after=later) == "20261202T130001Z"
    older = tmp_path / "archive" / "demo-20261101T000000Z.duckdb"
    assert free_stamp(child_folder, "demo", lambda: NOON, after=older) == "20261202T120000Z"


def test_a_parent_named_without_a_stamp_leaves_the_clock_alone(tmp_path: Path) -> None:
    assert free_stamp(tmp_path, "demo", lambda: NOON, after=tmp_path / "pulled.duckdb") == (
        "20261202T120000Z"
    )
