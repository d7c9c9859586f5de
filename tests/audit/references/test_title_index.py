"""audit.references.resolve.TitleIndex: it finds exactly the records the title rule calls the
same title, without scoring every title."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.references.compare import compare_titles
from audit.references.resolve import TITLE_CANDIDATES, TitleIndex, WorkRecord


def _record(i: int, title: str) -> WorkRecord:
    return WorkRecord(
        record_id=f"pmid:{99100000 + i}",
        source="pubmed",
        title=title,
        authors=(),
        year=None,
        venue=None,
        doi=None,
        pmid=None,
        pmcid=None,
        publication_types=(),
        content_type=None,
        retracted=None,
        expression_of_concern=None,
        preprint=None,
        withdrawn=False,
    )


WORDS = st.sampled_from(
    ["vitamin", "x", "cohort", "adults", "outcomes", "a", "trial", "Mice", "liver", "injury"]
)
MARKS = st.sampled_from([" ", " ", " ", ": ", " - ", ". ", "? ", " ("])
TITLE = st.lists(st.tuples(WORDS, MARKS), min_size=1, max_size=9).map(
    lambda parts: "".join(w + m for w, m in parts).strip()
)


@settings(max_examples=100, deadline=None)
@given(st.lists(TITLE, min_size=1, max_size=TITLE_CANDIDATES), TITLE)
def test_the_index_finds_exactly_the_titles_the_rule_calls_the_same(
    titles: list[str], query: str
) -> None:
    records = [_record(i, t) for i, t in enumerate(titles)]
    found = {r.record_id for r in TitleIndex(records).same_title(query)}
    same = {r.record_id for r in records if compare_titles(query, r.title).outcome == "match"}
    assert found == same


def test_a_subtitle_left_out_either_way_is_found() -> None:
    index = TitleIndex(
        [
            _record(1, "Vitamin X in adults: a ten-year cohort"),
            _record(2, "Vitamin Z in mice"),
            _record(3, "Liver injury after vitamin Z in mice"),
        ]
    )
    assert [r.record_id for r in index.same_title("Vitamin X in adults")] == ["pmid:99100001"]
    shorter = index.same_title("Vitamin Z in mice: a randomised study")
    assert [r.record_id for r in shorter] == ["pmid:99100002"]
    assert index.same_title("Unrelated words entirely") == ()
    assert index.same_title("!!!") == ()  # folds to nothing: no title to compare


def test_at_most_the_nearest_candidates_are_returned_best_first() -> None:
    titles = [f"Vitamin X in adults{'!' * i}" for i in range(8)] + ["Vitamin X in adult"]
    index = TitleIndex([_record(i, t) for i, t in enumerate(titles)])
    found = index.same_title("Vitamin X in adults")
    assert len(found) == TITLE_CANDIDATES
    assert [r.record_id for r in found] == [f"pmid:{99100000 + i}" for i in range(5)]
