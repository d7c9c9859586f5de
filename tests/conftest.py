"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.keys import Keyring
from pipeline.snapshot.trust import SealPolicy

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference-responses"

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
