"""A warm corpus's look-ups answered from the tiers it holds (audit/warm.py), without DuckDB."""

from __future__ import annotations

import sys
from typing import Any

from audit.corpus import PassageKey, PathRef, StoredPassage
from audit.folding import fold
from audit.warm import PASSAGE_BYTES, PassageHoard, WarmCorpus, Warmth

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


def test_a_cold_tier_asks_the_statements_for_exactly_the_ids_wanted() -> None:
    asked: list[object] = []

    def fetch(ids: Any) -> dict[str, Any]:
        asked.append(ids)
        return {}

    cold = WarmCorpus(Warmth.cold(10, "cold"))
    ids = {HELD, NOT_HELD}
    assert cold.records(ids, fetch) == {}
    assert asked == [ids]


def _row(version: str, text: str, folded: str | None) -> tuple[Any, ...]:
    return (HELD, version, "abstract.1", None, text, folded)


def test_the_hoards_estimate_is_the_passages_bytes_summed_over_every_add() -> None:
    hoard = PassageHoard(budget=10**9)
    assert hoard.estimate == 0
    first = [_row("1", "Café text.", "cafe text."), _row("2", "Plain text.", None)]
    assert hoard.add(first)
    once = 2 * PASSAGE_BYTES + sum(map(sys.getsizeof, ("Café text.", "cafe text.", "Plain text.")))
    assert hoard.estimate == once
    assert hoard.add([_row("3", "More.", None)])
    assert hoard.estimate == once + PASSAGE_BYTES + sys.getsizeof("More.")


def test_the_hoard_holds_up_to_its_budget_exactly() -> None:
    rows = [_row("1", "Some text.", None)]
    size = PASSAGE_BYTES + sys.getsizeof("Some text.")
    assert PassageHoard(budget=size).add(rows)
    assert not PassageHoard(budget=size - 1).add(rows)


def test_only_records_with_passages_in_two_versions_need_their_lineage() -> None:
    hoard = PassageHoard(budget=10**9)
    hoard.add([_row("1", "a", None), _row("1", "b", None)])
    assert hoard.several_versions() == set()
    hoard.add([_row("2", "c", None)])
    assert hoard.several_versions() == {HELD}


def test_several_versions_come_in_lineage_order_with_an_unknown_one_first() -> None:
    hoard = PassageHoard(budget=10**9)
    hoard.add([_row(v, f"text {v}", None) for v in ("10", "9", "c", "b")])
    seq = {(HELD, "9"): 1, (HELD, "10"): 2, (HELD, "b"): 3}  # "c" is in no lineage row
    done = hoard.done({HELD}, seq)
    assert [p.version for p in done[HELD]] == ["c", "9", "10", "b"]
