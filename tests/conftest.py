"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from audit.keys import Keyring
from pipeline.snapshot.trust import SealPolicy

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference-responses"

# Hypothesis's deadline per example is a timing assertion, and on a loaded 2-core host it
# fails correct code (speed is proven by make bench, never by a unit test). Every other setting
# stays as Hypothesis chose it (random examples; its derandomized "ci" profile when CI is set).
settings.register_profile("citeseal", settings.default, deadline=None)
settings.load_profile("citeseal")

TEST_KEY = b"citeseal test key: not a secret, tests only!"
TEST_KEYRING = Keyring([TEST_KEY])
"""Seals the snapshots tests build (library calls take a keyring explicitly)."""
TRUST = SealPolicy.of(TEST_KEYRING)
"""Accepts exactly the snapshots sealed with :data:`TEST_KEYRING`."""
TEST_KEY_HEX = TEST_KEY.hex()
"""``CITESEAL_KEY`` for CLI tests that read snapshots the library built with TEST_KEYRING."""


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's key or data dir, or a real API key."""
    for name in (
        "CITESEAL_KEY",
        "CITESEAL_KEY_FILE",
        "CITESEAL_DEMO_KEY",
        "CITESEAL_VERBOSE",
        "NCBI_API_KEY",
        "OPENFDA_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CITESEAL_DATA_DIR", str(tmp_path / "citeseal-data"))


def reference_files(source: str) -> list[Path]:
    """The recorded reference responses of one source (empty when ../shared is absent)."""
    folder = REFERENCE / source
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


requires_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(), reason="../shared/reference-responses is not beside the project"
)


@pytest.fixture(scope="session")
def facets_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planted filter records (tests/pipeline/snapshot/planted_facets.py) written once as a
    snapshot that the filter, label-listing, CLI and MCP search tests only read."""
    from tests.pipeline.snapshot.planted_facets import FACET_RECORDS
    from tests.pipeline.snapshot.planted_search import write_planted

    folder = tmp_path_factory.mktemp("facets") / "facets"
    return write_planted(folder / "facets-1.duckdb", FACET_RECORDS)


@pytest.fixture(scope="session")
def demo_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo corpus harvested twice, sealed with :data:`TEST_KEYRING`: from replay, then
    with replay-update (a child: the trial and the label get a new version)."""
    from pipeline.settings import Settings
    from pipeline.snapshot.build import build_snapshot
    from tests.pipeline.snapshot.conftest import DEMO_REPLAY, DEMO_UPDATE, copy_demo_spec

    spec = copy_demo_spec(tmp_path_factory.mktemp("demo-pair"))
    first = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    second = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        parent="latest",
        replay=[DEMO_UPDATE, DEMO_REPLAY],
        settings=Settings(),
        resume=False,
    )
    return first.path, second.path
