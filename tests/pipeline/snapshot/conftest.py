"""Fixtures for snapshot tests: the demo corpus built twice, and small spec writers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.conftest import ROOT

DEMO_SPEC = ROOT / "snapshots" / "demo.toml"
DEMO_REPLAY = ROOT / "snapshots" / "demo" / "replay"
DEMO_UPDATE = ROOT / "snapshots" / "demo" / "replay-update"


def copy_demo_spec(folder: Path) -> Path:
    """The demo spec in ``folder`` (its corpus folder is ``folder/demo``)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(DEMO_SPEC, folder / "demo.toml"))


@pytest.fixture(scope="session")
def demo_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo corpus harvested twice: from replay, then with replay-update (child)."""
    spec = copy_demo_spec(tmp_path_factory.mktemp("demo-pair"))
    first = build_snapshot(spec, replay=[DEMO_REPLAY], settings=Settings(), resume=False)
    second = build_snapshot(
        spec,
        parent="latest",
        replay=[DEMO_UPDATE, DEMO_REPLAY],
        settings=Settings(),
        resume=False,
    )
    return first.path, second.path
