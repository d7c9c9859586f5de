"""The search bench (pipeline.bench.bench_search, bench_search_corpus): its metrics on tiny
hand-made rankings, its labels as they follow from the generation, and the generator's
determinism. No timing here."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pipeline.bench.bench_search import (
    WRITER_SOURCES,
    dcg,
    judged,
    ndcg_at,
    recall_at,
    relevance,
    work_gains,
    work_grades,
    writer_digest,
)
from pipeline.bench.bench_search_corpus import (
    SYNONYMS,
    Query,
    Topic,
    Work,
    generate,
    grade,
    labels,
    queries,
    write_snapshot,
)
from pipeline.snapshot.search import open_snapshot


def test_dcg_discounts_each_rank_by_log2_of_rank_plus_one() -> None:
    assert dcg([3, 2, 0, 1]) == pytest.approx(3 + 2 / math.log2(3) + 0 + 1 / math.log2(5))


def test_a_work_shown_twice_gains_only_the_first_time() -> None:
    assert work_gains([("w1", 3), ("w2", 1), ("w1", 3), ("w3", 2)]) == [3, 1, 0, 2]


def test_ndcg_of_a_hand_made_ranking_against_its_ideal() -> None:
    grades = {"w1": 3, "w2": 2, "w3": 1, "w4": 0}
    ranked = [("w2", 2), ("w4", 0), ("w1", 3)]
    ideal = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(ranked, grades) == pytest.approx((2 + 3 / math.log2(4)) / ideal)
    assert ndcg_at([("w1", 3), ("w2", 2), ("w3", 1)], grades) == pytest.approx(1.0)


def test_a_duplicate_lowers_ndcg_where_one_result_per_work_does_not() -> None:
    grades = {"w1": 3, "w2": 3}
    assert ndcg_at([("w1", 3), ("w1", 3), ("w2", 3)], grades) < 1.0
    assert ndcg_at([("w1", 3), ("w2", 3)], grades) == pytest.approx(1.0)


def test_ndcg_counts_only_the_first_k_results() -> None:
    grades = {"w1": 3, "w2": 3}
    assert ndcg_at([("w0", 0), ("w1", 3)], grades, k=1) == 0.0


def test_recall_is_over_the_relevant_works_or_k_whichever_is_fewer() -> None:
    grades = {f"w{n}": 1 for n in range(20)} | {"x": 0}
    ranked = [(f"w{n}", 1) for n in range(5)] + [("x", 0)] * 5
    assert recall_at(ranked, grades) == pytest.approx(5 / 10)
    assert recall_at([("w1", 3), ("w1", 3)], {"w1": 3, "w2": 2, "w3": 0}) == pytest.approx(1 / 2)
    assert recall_at([("x", 0)], {"x": 0}) == 0.0


TOPIC = Topic("farrow syndrome", "zentravir", "hepatic injury", "case report")


def _work(**stated: frozenset[tuple[str, str]]) -> Work:
    return Work(
        "pmid:1",
        TOPIC,
        (),
        {("pmid:1", path): facets for path, facets in stated.items()},
    )


def test_grades_follow_from_the_work_topic_and_what_each_passage_states() -> None:
    query = Query(
        "outcome",
        "hepatic injury with zentravir",
        frozenset({("drug", "zentravir"), ("outcome", "hepatic injury")}),
    )
    both = frozenset({("drug", "zentravir"), ("outcome", "hepatic injury")})
    work = _work(a=both, b=frozenset({("drug", "zentravir")}), c=frozenset())
    assert [grade(query, work, s) for s in work.stated.values()] == [3, 2, 1]
    other = Query("drug", "quolimab", frozenset({("drug", "quolimab")}))
    assert grade(other, work, frozenset({("drug", "quolimab")})) == 0  # the topic decides
    assert labels(other, [work]) == {}


def test_judged_names_each_hit_by_its_true_work_and_unlabelled_hits_grade_zero() -> None:
    graded = {("pmid:1", "title"): ("pmid:1", 3), ("pmcid:PMC1", "title"): ("pmid:1", 3)}
    work_of = {"pmid:1": "pmid:1", "pmcid:PMC1": "pmid:1", "pmid:2": "pmid:2"}
    hits = [("pmcid:PMC1", "title"), ("pmid:2", "abstract.1"), ("pmid:1", "title")]
    assert judged(hits, graded, work_of) == [("pmid:1", 3), ("pmid:2", 0), ("pmid:1", 3)]
    assert work_grades(graded) == {"pmid:1": 3}


def test_the_generator_gives_the_same_works_and_queries_for_the_same_seed() -> None:
    first, again, other = (list(generate(60, seed=s)) for s in (5, 5, 6))
    assert first == again
    assert first != other
    assert queries(first) == queries(again)


def test_each_passage_states_what_its_text_says() -> None:
    works = list(generate(200))
    for work in works:
        for record in work.records:
            for passage in record.passages:
                text = passage.text.lower()
                for kind, value in work.stated[(record.record_id, passage.path)]:
                    named = (value, SYNONYMS.get(value, value))
                    assert any(name in text for name in named), (kind, value, text)


def test_records_of_one_work_are_linked_as_the_snapshot_links_them() -> None:
    works = list(generate(300))
    sources = {r.source for w in works for r in w.records}
    assert sources == {"pubmed", "europepmc"}
    for work in works:
        pubmed, *others = work.records
        assert pubmed.record_id == work.work_id
        for other in others:
            linked = other.pmid == pubmed.pmid or any(
                rel.target == pubmed.record_id for rel in other.relations
            )
            assert linked


def test_the_question_set_has_fifty_five_queries_each_with_a_relevant_work() -> None:
    works = list(generate(400))
    asked = queries(works)
    assert len(asked) == 55
    assert {q.kind for q in asked} == {"condition", "drug", "outcome", "design"}
    assert all(labels(q, works) for q in asked)
    assert len({q.text for q in asked}) == 55


def test_relevance_on_a_small_generated_snapshot_scores_every_query(tmp_path: Path) -> None:
    works = list(generate(60))
    path = tmp_path / "small.duckdb"
    write_snapshot(path, iter(works))
    con = open_snapshot(path)
    try:
        asked = queries(works)[::18]  # one query of each kind
        scores = relevance(con, works, asked)
    finally:
        con.close()
    assert set(scores) == {"passage", "work"}
    for ndcg, recall in scores.values():
        assert 0.0 < ndcg <= 1.0 and 0.0 < recall <= 1.0
    assert scores["work"][0] >= scores["passage"][0]


def test_the_latency_cache_key_changes_with_the_code_that_writes_the_snapshot(
    tmp_path: Path,
) -> None:
    root = Path(__file__).resolve().parents[3]
    for name in WRITER_SOURCES:
        source = root / name
        for file in sorted(source.rglob("*.py")) if source.is_dir() else [source]:
            copy = tmp_path / file.relative_to(root)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(file.read_bytes())
    before = writer_digest(tmp_path)
    assert writer_digest(tmp_path) == before  # deterministic
    postings = tmp_path / "pipeline" / "snapshot" / "works.py"
    postings.write_text(postings.read_text() + "\n# a change to how postings are written\n")
    assert writer_digest(tmp_path) != before
