"""The parsers and the demo build produce, byte for byte, what the golden fingerprints say
(``tests/fingerprints.py``; regenerate with ``python -m tests.fingerprints`` only for a change
that is meant to alter parser or build output, and say so in the commit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import requires_reference
from tests.fingerprints import (
    GOLDEN,
    GOLDEN_REFERENCE,
    demo_fingerprints,
    files_fingerprints,
    fixture_files,
    reference_files,
)


def _golden(path: Path) -> dict[str, dict[str, object]]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_fixture_parses_to_its_golden_fingerprint() -> None:
    golden = _golden(GOLDEN)["fixtures"]
    now = files_fingerprints(fixture_files())
    assert len(now) >= 50  # the fixtures and the demo's recorded exchanges, not an empty walk
    assert now == golden


def test_the_demo_snapshots_hold_their_golden_content(demo_pair: tuple[Path, Path]) -> None:
    golden = _golden(GOLDEN)["demo"]
    now = demo_fingerprints(*demo_pair)
    assert now["demo/records"]["rows"] == 12  # type: ignore[index]
    assert now == golden


@requires_reference
def test_every_reference_response_parses_to_its_golden_fingerprint() -> None:
    golden = _golden(GOLDEN_REFERENCE)["reference"]
    now = files_fingerprints(reference_files())
    if not now:
        pytest.skip("no reference responses beside the project")
    assert now == golden
