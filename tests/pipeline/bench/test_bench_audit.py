"""The audit bench's handle figures (never the whole bench: it generates 1,000,000 passages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.keys import Keyring
from pipeline.bench.bench_audit import PEER_HANDLES, handle_figures
from pipeline.bench.bench_peer import PEER_PYTHON_ENV, PeerUnavailable, peer_python


def test_without_the_peer_the_handle_figures_keep_their_goals_and_say_why(
    tmp_path: Path,
) -> None:
    figures = handle_figures(tmp_path, Keyring.demo_keyring(), count=200, environ={})
    assert [f.name for f in figures] == [
        "handle parse from a string",
        "handle verify from a string (parse + HMAC)",
        "handle mint (a locator in, the string out)",
        "reference: hmac.digest, same messages",
        "  (7 rounds of 200 handles; slowest verify round)",
        f"  side by side skipped: set {PEER_PYTHON_ENV} to the peer's python",
    ]
    assert [f.goal for f in figures[:3]] == [
        2 * PEER_HANDLES[n] for n in ("parse", "verify", "mint")
    ]
    assert all(f.value > 0 for f in figures[:5])
    assert figures[-1].line() == figures[-1].name
    assert (tmp_path / "handles.txt").read_text(encoding="utf-8").count("\n") == 200


def test_a_peer_python_that_is_no_file_is_named_in_the_note(tmp_path: Path) -> None:
    missing = tmp_path / "no-python"
    with pytest.raises(PeerUnavailable) as caught:
        peer_python({PEER_PYTHON_ENV: str(missing)})
    assert str(caught.value) == f"side by side skipped: {PEER_PYTHON_ENV}={missing} is not a file"
    python = tmp_path / "python"
    python.write_text("")
    assert peer_python({PEER_PYTHON_ENV: f" {python} "}) == python
