"""``--snapshot`` resolution: a file, a corpus folder, or a bare corpus name under snapshots/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.errors import SnapshotError
from pipeline.snapshot.locate import resolve_snapshot
from pipeline.snapshot.manifest import manifest_path


def _corpus(root: Path, demo_pair: tuple[Path, Path]) -> Path:
    folder = root / "snapshots" / "demo"
    folder.mkdir(parents=True)
    for source in (demo_pair[1], manifest_path(demo_pair[1])):
        shutil.copyfile(source, folder / source.name)
    return folder / demo_pair[1].name


def test_a_bare_corpus_name_resolves_to_the_newest_in_snapshots_name(
    demo_pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    newest = _corpus(tmp_path, demo_pair)
    monkeypatch.chdir(tmp_path)
    assert resolve_snapshot(Path("demo")) == Path("snapshots/demo") / newest.name


def test_a_missing_snapshot_hint_names_the_demo_spec_only_where_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SnapshotError) as caught:
        resolve_snapshot(Path("nothing"))
    assert (caught.value.message, caught.value.advice) == (
        "snapshot nothing does not exist",
        "pass a snapshot file (.duckdb), a corpus folder or a corpus NAME (snapshots/NAME); "
        "build one with: citeseal snapshot build SPEC.toml",
    )
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "demo.toml").write_text("", encoding="utf-8")
    with pytest.raises(SnapshotError) as caught:
        resolve_snapshot(Path("nothing"))
    assert caught.value.advice == "build one with: citeseal snapshot build snapshots/demo.toml"
