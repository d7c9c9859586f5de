"""A corpus kept warm judges every citation and answer as the statements do, reads nothing per
look-up, and falls back to the statements for a tier over its memory budget."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from audit.citations import parse_answer
from audit.corpus import PassageKey, PathRef
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import CitationInput, audit_answer, judge_citations
from audit.errors import CitationSyntaxError
from audit.handles import mint, parse_locator
from audit.warm import PASSAGE_BYTES, RECORD_BYTES
from pipeline.bench import bench_audit
from tests.audit.planted import KEYRING, OTHER, make_corpus, write_snapshot
from tests.audit.test_duckdb_corpus import _CountingConnection, _write_snapshot

NOW = datetime(2026, 12, 2, tzinfo=UTC)
TRIAL = "nct:NCT99000001"
PMID = "pmid:99000002"


def _handle(locator: str) -> str | None:
    try:
        return mint(KEYRING, parse_locator(locator))
    except CitationSyntaxError:  # a pinned scheme unpinned, an id no handle can name
        return None


def _citations(path: Path) -> list[tuple[str, str | None]]:
    """(handle, quote) for every passage of the snapshot at ``path``: pinned to its version
    with a quote from its text and with a misquote, unpinned; per record a path it lacks and
    a version it does not retain; a record it does not hold, a forged and a malformed one."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT record_id, version, path, text FROM passages").fetchall()
    finally:
        con.close()
    cases: list[tuple[str | None, str | None]] = []
    for rid, version, where, text in sorted(rows):
        words = [w for w in text.split() if '"' not in w]  # quoted in the answer's "…"
        cases += [
            (_handle(f"{rid}@{version}/{where}"), " ".join(words[1:5]) or None),
            (_handle(f"{rid}@{version}/{where}"), "a quote no passage holds"),
            (_handle(f"{rid}/{where}"), None),
            (_handle(f"{rid}/abstract.99"), None),
            (_handle(f"{rid}@1999-01-01/{where}"), None),
        ]
    cases += [
        (_handle("pmid:99000999/abstract.1"), None),
        (mint(OTHER, parse_locator(f"{rows[0][0]}/{rows[0][2]}")), None),
        ("pmid:99000001-abstract", None),
    ]
    return [(handle, quote) for handle, quote in cases if handle is not None]


def _warm(path: Path, budget: int | None = None) -> DuckDBCorpus:
    corpus = DuckDBCorpus(path)
    if budget is None:
        corpus.keep_warm()
    else:
        corpus.keep_warm(budget)
    return corpus


def _same_judgements(path: Path) -> set[str]:
    """Cold and warm judge every citation of :func:`_citations` alike, and audit an answer
    citing them all alike; the verdicts and flags seen."""
    cases = _citations(path)
    citations = [CitationInput.from_text(handle, quote) for handle, quote in cases]
    quoted = [f'{handle} "{quote}"' if quote else handle for handle, quote in cases]
    answer = " ".join(f"Claim {n} [{cited}]." for n, cited in enumerate(quoted))
    with DuckDBCorpus(path) as cold, _warm(path) as warm:
        assert warm.records({"pmid:99000999"}) == {}  # a record it does not hold: absent
        judged = judge_citations(citations, cold, KEYRING)
        assert judge_citations(citations, warm, KEYRING) == judged
        parsed = parse_answer(answer)
        reports = [audit_answer(parsed, c, KEYRING, now=NOW).model_dump() for c in (cold, warm)]
    assert reports[0] == reports[1]
    return {r.verdict for r in judged} | {f.name for r in judged for f in r.flags}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(path)
    return path


def test_warm_judges_the_demo_snapshots_as_the_statements_do(
    demo_pair: tuple[Path, Path],
) -> None:
    seen = _same_judgements(demo_pair[1])
    assert {"ok", "withdrawn", "quote_mismatch", "unavailable", "forged", "malformed"} <= seen
    assert {"retracted", "expression_of_concern", "preprint", "version_changed"} <= seen
    assert "ok" in _same_judgements(demo_pair[0])


def test_warm_judges_the_planted_snapshot_as_the_statements_do(tmp_path: Path) -> None:
    seen = _same_judgements(write_snapshot(make_corpus(), tmp_path / "planted.duckdb"))
    assert {"ok", "withdrawn", "quote_mismatch", "retracted", "version_changed"} <= seen


def test_warm_judges_a_generated_snapshot_as_the_statements_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_audit, "RECORDS", 30)
    path = tmp_path / "generated.duckdb"
    bench_audit.generate_snapshot(path)
    assert {"ok", "withdrawn", "quote_mismatch", "retracted"} <= _same_judgements(path)


def _counted(corpus: DuckDBCorpus, path: Path) -> tuple[DuckDBCorpus, _CountingConnection]:
    counting = _CountingConnection(duckdb.connect(str(path), read_only=True))
    return corpus.reading_through(counting), counting  # type: ignore[arg-type]


@pytest.fixture
def cold_answers(tiny: Path) -> Iterator[tuple[object, ...]]:
    with DuckDBCorpus(tiny) as cold:
        yield _look_ups(cold)


def _look_ups(corpus: DuckDBCorpus) -> tuple[object, ...]:
    records = corpus.records([TRIAL, PMID, "pmid:99000404"])
    versions = corpus.passage_versions(
        [PathRef(TRIAL, "trial.brief_summary.1"), PathRef(TRIAL, "trial.none.1")]
    )
    passages = corpus.passages(
        [PassageKey(TRIAL, "2025-01-15", "trial.arms.2"), PassageKey(PMID, "2", "abstract.1")]
    )
    return records, versions, passages


def test_a_warm_corpus_answers_its_look_ups_without_a_statement(
    tiny: Path, cold_answers: tuple[object, ...]
) -> None:
    with _warm(tiny) as warm:
        assert warm.keep_warm().note == "records and passages kept warm"
        call, counting = _counted(warm, tiny)
        assert _look_ups(call) == cold_answers
        assert counting.statements == []
        call.close()


def test_over_the_budget_nothing_is_kept_warm_and_the_statements_answer(
    tiny: Path, cold_answers: tuple[object, ...]
) -> None:
    with _warm(tiny, 2 * RECORD_BYTES - 1) as warm:
        warmth = warm.keep_warm(2 * RECORD_BYTES - 1)
        assert (warmth.records, warmth.passages, warmth.estimate) == (None, None, 0)
        assert warmth.note == (
            "not kept warm: 2 records would take ~0 MiB, over the budget of 0 MiB"
        )
        call, counting = _counted(warm, tiny)
        assert _look_ups(call) == cold_answers
        # records: state, records, lineage, relations; the passages in two versions: their
        # order; the passages by key
        assert len(counting.statements) == 7
        call.close()


@pytest.mark.parametrize(
    "room",
    [
        4 * PASSAGE_BYTES - 1,  # the passages' count alone says they cannot fit
        4 * PASSAGE_BYTES + 100,  # they could, but their text goes over while they load
    ],
)
def test_passages_over_the_budget_leave_the_records_warm_and_their_statements(
    tiny: Path, cold_answers: tuple[object, ...], room: int
) -> None:
    budget = 2 * RECORD_BYTES + room
    with _warm(tiny, budget) as warm:
        warmth = warm.keep_warm(budget)
        assert warmth.records is not None and warmth.passages is None
        assert warmth.estimate == 2 * RECORD_BYTES
        assert warmth.note.startswith("records kept warm; 4 passages would take ~0 MiB, over")
        call, counting = _counted(warm, tiny)
        assert _look_ups(call) == cold_answers
        assert len(counting.statements) == 3  # the passages; their order; the passages by key
        call.close()


def test_the_records_kept_warm_are_those_of_the_statements(tiny: Path) -> None:
    with DuckDBCorpus(tiny) as cold, _warm(tiny) as warm:
        warmth = warm.keep_warm()
        assert warmth.records == cold.records([TRIAL, PMID])
        assert warmth.passages is not None
        assert [p.version for p in warmth.passages[TRIAL] if p.path.startswith("trial.brief")] == [
            "2025-01-15",
            "2025-06-02",
        ]  # oldest first, by the lineage's order (inserted newest first)
