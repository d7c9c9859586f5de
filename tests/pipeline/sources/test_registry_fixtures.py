"""The committed registry demo exchanges and fixtures are what their generator writes, and
the demo harvest finds every record in them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from pipeline.http import HttpClient
from pipeline.replay import ReplayTransport
from pipeline.settings import Settings
from pipeline.sources import clinicaltrials, openfda
from tests.conftest import ROOT

GENERATOR = ROOT / "snapshots" / "demo" / "make_replay_registries.py"
FOLDERS = (
    "snapshots/demo/replay/clinicaltrials",
    "snapshots/demo/replay/openfda",
    "snapshots/demo/replay-update/clinicaltrials",
    "snapshots/demo/replay-update/openfda",
    "tests/fixtures/clinicaltrials",
    "tests/fixtures/openfda",
    "tests/fixtures/history",
)


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_replay_registries", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for folder in FOLDERS
        for path in sorted((root / folder).rglob("*.json"))
    }


def test_committed_files_match_the_generator(tmp_path: Path) -> None:
    written = load_generator().main(tmp_path)
    assert len(written) == 16
    assert files_under(tmp_path) == files_under(ROOT), (
        "registry fixtures are stale: run .venv/bin/python snapshots/demo/make_replay_registries.py"
    )


def test_demo_harvest_replays_both_snapshots() -> None:
    ids = ["NCT99000001", "NCT99000002", "NCT99000003"]
    first = [ROOT / "snapshots/demo/replay"]
    update = [ROOT / "snapshots/demo/replay-update", *first]
    with HttpClient(Settings(), transport=ReplayTransport(first)) as client:
        trials = clinicaltrials.fetch_records(client, ids)
        labels = openfda.fetch_records(client, ["5eed0001-0000-4000-8000-000000000001"])
    with HttpClient(Settings(), transport=ReplayTransport(update)) as client:
        trials2 = clinicaltrials.fetch_records(client, list(reversed(ids)))
        labels2 = openfda.fetch_records(client, ["5eed0001-0000-4000-8000-000000000001"])
    assert [(t.record_id, t.version, t.status) for t in trials] == [
        ("nct:NCT99000001", "2025-01-15", "RECRUITING"),
        ("nct:NCT99000002", "2024-11-20", "WITHDRAWN"),
        ("nct:NCT99000003", "2024-09-10", "COMPLETED"),
    ]
    by_id = {t.record_id: t for t in trials2}
    assert by_id["nct:NCT99000001"].version == "2025-06-02"
    for unchanged in ("nct:NCT99000002", "nct:NCT99000003"):
        assert by_id[unchanged].content_hash() == next(
            t.content_hash() for t in trials if t.record_id == unchanged
        )
    assert [(x.version, x.version_date) for x in labels] == [("3", "2024-11-05")]
    assert [(x.version, x.version_date) for x in labels2] == [("4", "2025-05-20")]
