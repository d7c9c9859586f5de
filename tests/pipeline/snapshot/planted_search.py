"""A snapshot of planted records for the search filter and paging tests.

Records are :class:`pipeline.records.Record` values (synthetic ids: PMIDs above 99000000, DOI
prefix 10.5555, NCT99xxxxxx) written with the real schema, the real ``records`` row
(:func:`pipeline.snapshot.ingest.record_row`) and the real search index
(:func:`pipeline.snapshot.index.index_unindexed`), then sealed with the test key. Every
passage holds the word ``zorblax``, so one query matches every record; what each filter keeps
is then exactly a set of record ids.
"""

from __future__ import annotations

from pathlib import Path

from audit.folding import fold
from pipeline.records import Flags, Passage, Record, Relation
from pipeline.snapshot.index import INDEX_VERSION, index_unindexed
from pipeline.snapshot.ingest import record_row
from pipeline.snapshot.schema import MIGRATIONS, SCHEMA_VERSION
from pipeline.snapshot.store import connect, load_fts
from pipeline.snapshot.works import store_works
from tests.conftest import TEST_KEYRING
from tests.sealing import seal_snapshot

QUERY = "zorblax"


def _paper(
    record_id: str,
    source: str,
    *,
    year: int | None,
    flags: Flags,
    metadata: dict[str, object] | None = None,
    passages: int = 2,
) -> Record:
    return Record(
        record_id=record_id,
        source=source,  # type: ignore[arg-type]
        version="1",
        title=f"Zorblax study {record_id}",
        year=year,
        flags=flags,
        metadata=metadata or {},
        passages=[
            Passage(path=f"abstract.{n}", section="abstract", text=f"Zorblax finding {n} of it.")
            for n in range(1, passages + 1)
        ],
    )


def _trial(nct: str, status: str | None, first_posted: str | None) -> Record:
    return Record(
        record_id=f"nct:{nct}",
        source="clinicaltrials",
        version="2025-01-15",
        version_date="2025-01-15",
        title=f"Zorblax trial {nct}",
        content_type="trial",
        status=status,
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        metadata={"first_posted": first_posted} if first_posted else {},
        passages=[
            Passage(path="trial.brief_summary.1", section="brief summary", text="Zorblax arm.")
        ],
    )


CLEAN = Flags(retracted=False, expression_of_concern=False, preprint=False)

RECORDS = [
    _paper("pmid:99100001", "pubmed", year=2019, flags=CLEAN),
    _paper(
        "pmid:99100002",
        "pubmed",
        year=2020,
        flags=Flags(retracted=True, expression_of_concern=False, preprint=False),
    ),
    _paper(
        "pmid:99100003",
        "pubmed",
        year=2021,
        flags=Flags(retracted=False, expression_of_concern=True, preprint=False),
    ),
    # undated, and whether it is retracted or under concern is unknown
    _paper("pmid:99100004", "pubmed", year=None, flags=Flags(preprint=False)),
    _paper(
        "ppr:PPR99100005",
        "europepmc",
        year=2021,
        flags=Flags(retracted=False, expression_of_concern=False, preprint=True),
        metadata={"first_publication_date": "2021-06-15"},
    ),
    _paper(
        "pmcid:PMC99100006",
        "europepmc",
        year=2021,
        flags=CLEAN,
        metadata={"first_publication_date": "2021-07"},
    ),
    _paper("doi:10.5555/zorblax.7", "crossref", year=2021, flags=CLEAN, passages=1),
    # a date that is no ISO date counts as unknown
    _paper(
        "pmcid:PMC99100008",
        "europepmc",
        year=None,
        flags=CLEAN,
        metadata={"first_publication_date": "June 2021"},
    ),
    _trial("NCT99100001", "RECRUITING", "2022-01-10"),
    _trial("NCT99100002", "COMPLETED", "2018-05"),
    _trial("NCT99100003", None, None),
    _trial("NCT99100004", "TERMINATED", "2023-03-01"),
]
"""The planted records (docstring of each filter test says which it keeps)."""


WORKS_QUERY = "quorvex"


def _work_record(
    record_id: str,
    source: str,
    *,
    flags: Flags = CLEAN,
    words: int = 1,
    relations: tuple[Relation, ...] = (),
    **ids: str,
) -> Record:
    return Record(
        record_id=record_id,
        source=source,  # type: ignore[arg-type]
        version="1",
        title=f"Study {record_id}",
        year=2022,
        flags=flags,
        relations=list(relations),
        passages=[
            Passage(path="abstract.1", section="abstract", text="Quorvex " * words + "results.")
        ],
        **ids,  # type: ignore[arg-type]
    )


WORK_RECORDS = [
    _work_record(
        "pmid:99200001",
        "pubmed",
        pmid="99200001",
        doi="10.5555/Quorvex.A",
        flags=Flags(retracted=True, expression_of_concern=False, preprint=False),
        words=3,
    ),
    _work_record("pmcid:PMC99200001", "europepmc", pmid="99200001", pmcid="PMC99200001", words=4),
    _work_record(
        "doi:10.5555/quorvex.a",
        "crossref",
        doi="10.5555/quorvex.a",
        flags=Flags(expression_of_concern=False, preprint=False),
        words=2,
    ),
    _work_record(
        "ppr:PPR99200002",
        "europepmc",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=True),
        relations=(Relation(kind="preprint_of", target="pmid:99200002", source="europepmc"),),
        words=5,
    ),
    _work_record("pmid:99200002", "pubmed", pmid="99200002", words=2),
    _work_record(
        "doi:10.5555/quorvex.c",
        "crossref",
        doi="10.5555/quorvex.c",
        relations=(
            Relation(kind="has_preprint", target="doi:10.5555/QUORVEX.CPRE", source="crossref"),
        ),
    ),
    _work_record(
        "doi:10.5555/quorvex.cpre",
        "crossref",
        doi="10.5555/quorvex.cpre",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=True),
        words=2,
    ),
    *(
        _work_record(f"pmid:992000{n}", "pubmed", pmid=f"992000{n}", words=n % 4 + 1)
        for n in range(10, 17)
    ),
]
"""Records of three works across sources and seven single ones (tests/pipeline/snapshot/
test_search_works.py says which record is which); every passage holds ``quorvex``."""


def write_planted(path: Path, records: list[Record] = RECORDS, *, works: bool = True) -> Path:
    """Write ``records`` as a sealed snapshot at ``path``; returns ``path``. ``works``: store
    the works and postings as a build does last (search takes the fast path), else leave
    them to be grouped at search time (the path of a snapshot written before schema 6)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = connect(path)
    try:
        for migration in MIGRATIONS:
            con.execute(migration.sql)
        meta = {
            "name": "planted",
            "snapshot_id": path.stem,
            "created_at": "2025-06-02T00:00:00Z",
            "schema_version": str(SCHEMA_VERSION),
            "tool_version": "test",
            "search_index": INDEX_VERSION,
        }
        con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
        for source in sorted({r.source for r in records}):
            con.execute("INSERT INTO sources (source, status) VALUES (?, 'ok')", [source])
        for record in records:
            version = record.version or "1"
            row = list(record_row(record, version, f"hash-{record.record_id}"))
            con.execute(
                f"INSERT INTO records VALUES ({', '.join('?' * len(row))})",  # noqa: S608
                row,
            )
            con.execute(
                "INSERT INTO record_versions VALUES (?, ?, 1, 'h', ?, ?, 'harvest')",
                [record.record_id, version, path.stem, path.stem],
            )
            con.execute(
                "INSERT INTO record_state VALUES (?, ?, ?, FALSE, NULL)",
                [record.record_id, record.source, version],
            )
            for relation in record.relations:
                con.execute(
                    "INSERT INTO relations VALUES (?, ?, ?, ?, NULL, NULL, ?)",
                    [record.record_id, relation.kind, relation.target, relation.source, path.stem],
                )
            for seq, passage in enumerate(record.passages, start=1):
                con.execute(
                    "INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        record.record_id,
                        version,
                        passage.path,
                        seq,
                        passage.section,
                        passage.text,
                        fold(passage.text),
                    ],
                )
        load_fts(con)
        index_unindexed(con)
        if works:
            store_works(con)
    finally:
        con.close()
    seal_snapshot(path, TEST_KEYRING, name="planted")
    return path
