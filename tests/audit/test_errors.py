"""Project errors keep every detail through pickling (the snapshot writer process sends them
back to the build that way)."""

from __future__ import annotations

import pickle

from audit.errors import CitationSyntaxError, CiteSealError
from pipeline.errors import TamperedSnapshotError


def roundtrip(error: CiteSealError) -> CiteSealError:
    return pickle.loads(pickle.dumps(error))  # noqa: S301 (our own bytes)


def test_message_advice_and_exit_code_survive_pickling() -> None:
    error = roundtrip(TamperedSnapshotError("sha256 differs", advice="rebuild it"))
    assert type(error) is TamperedSnapshotError
    assert (str(error), error.message, error.advice, error.exit_code) == (
        "sha256 differs",
        "sha256 differs",
        "rebuild it",
        1,
    )


def test_a_syntax_error_keeps_its_caret() -> None:
    error = roundtrip(
        CitationSyntaxError("bad handle", text="[cs:pmid:1@]", start=11, end=12, expected="a")
    )
    assert isinstance(error, CitationSyntaxError)
    assert error.caret() == "[cs:pmid:1@]\n           ^"


def test_the_arguments_survive_pickling_so_a_traceback_still_shows_the_message() -> None:
    error = roundtrip(TamperedSnapshotError("sha256 differs", advice="rebuild it"))
    assert error.args == ("sha256 differs",)
    assert repr(error) == "TamperedSnapshotError('sha256 differs')"
