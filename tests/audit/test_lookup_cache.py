"""A corpus with a look-up cache answers as one without, and reads each record only once."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from audit.corpus import PathRef
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import CitationInput, judge_citations
from audit.lookup_cache import LookupCache
from tests.audit.planted import KEYRING, make_corpus, write_snapshot
from tests.audit.test_duckdb_corpus import PARITY_CASES, _CountingConnection, _write_snapshot

TRIAL = "nct:NCT99000001"
PMID = "pmid:99000002"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(path)
    return path


def _through(path: Path, cache: LookupCache) -> tuple[DuckDBCorpus, _CountingConnection]:
    """A per-call corpus of a cached served corpus, counting the statements it runs."""
    served = DuckDBCorpus(path, sha256="ab" * 32, cache=cache)
    counting = _CountingConnection(duckdb.connect(str(path), read_only=True))
    call = served.reading_through(counting)  # type: ignore[arg-type]
    served.close()
    return call, counting


def test_a_record_looked_up_once_is_not_read_again_and_reads_the_same(snapshot: Path) -> None:
    cache = LookupCache()
    with DuckDBCorpus(snapshot) as plain:
        expected = plain.records([TRIAL, PMID, "pmid:99000404"])
        passages = plain.passage_versions([PathRef(TRIAL, "trial.brief_summary.1")])
    first, counted = _through(snapshot, cache)
    assert first.records([TRIAL, PMID, "pmid:99000404"]) == expected
    assert first.passage_versions([PathRef(TRIAL, "trial.brief_summary.1")]) == passages
    # state, records, lineage, relations; the passages, held in two versions: their order
    assert len(counted.statements) == 6
    first.close()
    second, again = _through(snapshot, cache)
    assert second.records([PMID, TRIAL, "pmid:99000404"]) == expected
    assert second.passage_versions([PathRef(TRIAL, "trial.brief_summary.1")]) == passages
    assert again.statements == []  # the absent record too is remembered as absent
    assert second.records(["pmid:99000002", "pmid:99000405"]).keys() == {PMID}
    assert len(again.statements) == 1  # only the id not asked before: its state is missing
    second.close()


def test_the_cache_keeps_its_limit_of_most_recently_used_entries(snapshot: Path) -> None:
    cache = LookupCache(limit=1)
    call, counted = _through(snapshot, cache)
    call.records([TRIAL])
    call.records([PMID])  # the trial is dropped
    counted.statements.clear()
    call.records([PMID])
    assert counted.statements == []
    assert call.records([TRIAL]).keys() == {TRIAL}
    assert counted.statements != []
    call.close()


def test_verdicts_with_the_cache_are_those_without(tmp_path: Path) -> None:
    path = write_snapshot(make_corpus(), tmp_path / "planted.duckdb")
    citations = [CitationInput.from_text(handle, quote) for handle, quote in PARITY_CASES]
    with DuckDBCorpus(path, sha256="ab" * 32) as plain:
        expected = judge_citations(citations, plain, KEYRING)
    cache = LookupCache()
    statements = []
    for _ in range(2):  # cold, then every look-up from the cache
        call, counted = _through(path, cache)
        assert judge_citations(citations, call, KEYRING) == expected
        statements.append(len(counted.statements))
        call.close()
    assert statements[0] > 0 and statements[1] == 0
    assert len({r.verdict for r in expected}) == 6
