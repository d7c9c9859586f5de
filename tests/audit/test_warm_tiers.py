"""A warm corpus's look-ups answered from the tiers it holds (audit/warm.py), without DuckDB."""

from __future__ import annotations

from typing import Any

from audit.corpus import PassageKey, PathRef, StoredPassage
from audit.folding import fold
from audit.warm import WarmCorpus, Warmth

HELD = "pmid:99000001"
NOT_HELD = "pmid:99000002"


def _passage(version: str, path: str) -> StoredPassage:
    text = f"Passage {path} of version {version}."
    return StoredPassage(HELD, version, path, None, text, fold(text))


def _warm() -> WarmCorpus:
    passages = (_passage("1", "abstract.1"), _passage("2", "abstract.1"), _passage("2", "title"))
    return WarmCorpus(Warmth({}, {HELD: passages}, 1_000, 2_000, "warm"))


def _refuse(asked: Any) -> Any:
    raise AssertionError(f"a held tier was looked up by statement: {asked!r}")


def test_a_cold_warmth_holds_no_tier_and_keeps_its_budget_and_note() -> None:
    assert Warmth.cold(4_096, "over the budget") == Warmth(None, None, 0, 4_096, "over the budget")


def test_passages_of_a_record_the_tier_does_not_hold_are_not_found() -> None:
    wanted = [PassageKey(NOT_HELD, "1", "abstract.1"), PassageKey(HELD, "2", "title")]
    found = _warm().passages(wanted, _refuse)
    assert list(found) == [PassageKey(HELD, "2", "title")]
    assert found[PassageKey(HELD, "2", "title")].text == "Passage title of version 2."
    assert _warm().passages([PassageKey(NOT_HELD, "1", "abstract.1")], _refuse) == {}


def test_path_versions_come_oldest_first_and_an_unheld_record_has_none() -> None:
    refs = [PathRef(HELD, "abstract.1"), PathRef(NOT_HELD, "abstract.1"), PathRef(HELD, "body")]
    found = _warm().passage_versions(refs, _refuse)
    assert list(found) == [PathRef(HELD, "abstract.1")]
    assert [p.version for p in found[PathRef(HELD, "abstract.1")]] == ["1", "2"]
