"""Reference-check throughput on a generated snapshot of 1,000,000 passages (``make bench``).

The snapshot is :mod:`pipeline.bench.bench_audit`'s (100,000 invented PubMed records × 10
passages, generated straight into DuckDB), each record given a DOI, a varied title, authors,
a year and a journal. The checked document is a generated Vancouver-style reference list of
:data:`REFERENCES` entries, the kinds a real list holds: a DOI with matching metadata, a PMID
with an abbreviated journal, a title without identifier (the title search), an invented DOI,
an impossible NCT number, a PMID the snapshot does not hold. Figures:

- references/s — ``citeseal check``'s path (extraction, one batch of identifier look-ups, the
  title search) on the whole list, the title index built on the first title search included;
- the same for a list without identifier-less entries (identifier look-ups only);
- title searches/s — :meth:`SnapshotResolver.by_title` alone, the index already built;
- audit answers/s — ``audit_many`` over :mod:`~pipeline.bench.bench_audit`'s generated answers
  (10 handle citations each), without and with the references check (what ``citeseal audit``
  adds per answer), and with two ordinary references added to each answer;
- reference: DuckDB ``IN`` look-ups of the list's DOIs, keys/s (a load gauge of the machine:
  the same kind of work with nothing of ours around it).
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import duckdb

from audit.citations import parse_answer
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import AuditInput, audit_many
from audit.keys import Keyring
from audit.references import extract_bytes
from audit.references.check import check_document
from audit.references.resolve import SnapshotResolver
from pipeline.bench import Figure
from pipeline.bench.bench_audit import (
    FIRST_PMID,
    RECORDS,
    _answers,  # pyright: ignore[reportPrivateUsage]
    generate_snapshot,
)

REFERENCES = 2_000
AUDITED = 1_000
TITLE_SEARCHES = 200
WORDS = [
    "zentravir",
    "cohort",
    "farrow",
    "syndrome",
    "hepatic",
    "renal",
    "neonatal",
    "outcomes",
    "registry",
    "trial",
    "protease",
    "inhibitor",
    "exposure",
    "pregnancy",
    "randomised",
    "placebo",
    "dosing",
    "adults",
    "children",
    "twins",
    "case",
    "series",
    "incidence",
    "mortality",
    "biomarkers",
    "imaging",
    "genomic",
    "variants",
]


def _title_sql() -> str:
    """A varied title per record: four of WORDS picked by r, then its number."""
    n = len(WORDS)
    picks = " || ' ' || ".join(
        f"list_extract({_words_list()}, ((r * {k} + {k * 7}) % {n}) + 1)" for k in (3, 7, 11, 13)
    )
    return f"upper(substr({picks}, 1, 1)) || substr({picks}, 2) || ' study ' || r"


def _words_list() -> str:
    return "[" + ", ".join(f"'{w}'" for w in WORDS) + "]"


def add_metadata(path: Path) -> None:
    """Give every record a DOI, a title, authors, a year and a journal."""
    con = duckdb.connect(str(path))
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(
            f"UPDATE records SET doi = '10.5555/bench.' || r, pmid = CAST({FIRST_PMID} + r AS "  # noqa: S608
            f"VARCHAR), title = t, authors = '[\"Author' || (r % 977) || ' A\", \"Second' || "
            f"(r % 31) || ' B\"]', year = 2000 + r % 25, journal = 'Journal of Invented "
            f"Medicine' FROM (SELECT r, {_title_sql()} AS t FROM range({RECORDS}) x(r)) g "
            f"WHERE records.record_id = 'pmid:' || ({FIRST_PMID} + g.r)"
        )
    finally:
        con.close()


def _entry(i: int, r: int, title: str, kind: str) -> str:
    authors = f"Author{r % 977} A, Second{r % 31} B"
    year = 2000 + r % 25
    if kind == "doi":
        return (
            f"{i}. {authors}. {title}. Journal of Invented Medicine. {year}. doi:10.5555/bench.{r}"
        )
    if kind == "pmid":
        return f"{i}. {authors}. {title}. J Invent Med. {year + 1}. PMID: {FIRST_PMID + r}"
    if kind == "title":
        return f"{i}. {authors}. {title}. J Invent Med. {year}."
    if kind == "invented":
        return f"{i}. Nobody N. An invented study {i}. J Invent Med. 2024. doi:10.5555/nope.{i}"
    if kind == "nct":
        return f"{i}. Nobody N. A registered trial {i}. 2024. NCT9900{i % 1000:03d}"
    return f"{i}. Nobody N. Unknown {i}. J Invent Med. 2024. PMID: {98_000_000 + i}"


KINDS = ("doi",) * 12 + ("pmid",) * 4 + ("title",) * 2 + ("invented", "nct", "absent")


def document(path: Path, rng: random.Random, kinds: tuple[str, ...]) -> tuple[bytes, list[int]]:
    rows = rng.sample(range(RECORDS), REFERENCES)
    con = duckdb.connect(str(path), read_only=True)
    try:
        titles = dict(
            con.execute(
                f"SELECT CAST(pmid AS BIGINT) - {FIRST_PMID}, title FROM records "  # noqa: S608
                "WHERE pmid IN (SELECT unnest($1::VARCHAR[]))",
                [[str(FIRST_PMID + r) for r in rows]],
            ).fetchall()
        )
    finally:
        con.close()
    lines = ["# References", ""]
    for i, r in enumerate(rows, start=1):
        lines.append(_entry(i, r, str(titles[r]), kinds[i % len(kinds)]))
    return ("\n".join(lines) + "\n").encode(), rows


def _check(path: Path, data: bytes) -> tuple[float, dict[str, int]]:
    resolver = SnapshotResolver.open(path, "bench")
    try:
        start = time.perf_counter()
        checked = check_document(extract_bytes(data, "refs.md"), resolver)
        seconds = time.perf_counter() - start
    finally:
        resolver.close()
    return seconds, checked.counts


def run(workdir: Path) -> list[Figure]:
    rng = random.Random(20261201)
    path = workdir / "bench.duckdb"
    start = time.perf_counter()
    generate_snapshot(path)
    add_metadata(path)
    generated = time.perf_counter() - start
    figures = [Figure("generate snapshot (1,000,000 passages)", generated, "s", None, False)]

    mixed, rows = document(path, rng, KINDS)
    seconds, counts = _check(path, mixed)
    tiers = ", ".join(f"{n} {t}" for t, n in counts.items() if n)
    figures.append(Figure(f"references, mixed list ({tiers})", REFERENCES / seconds, "/s"))
    ids_only = tuple(k for k in KINDS if k != "title")
    plain, _ = document(path, rng, ids_only)
    seconds, _ = _check(path, plain)
    figures.append(Figure("references, identifiers only", REFERENCES / seconds, "/s"))

    resolver = SnapshotResolver.open(path, "bench")
    try:
        start = time.perf_counter()
        resolver.by_title("warm up: build the title index")
        figures.append(
            Figure(
                "title index build (100,000 titles)", time.perf_counter() - start, "s", None, False
            )
        )
        con = duckdb.connect(str(path), read_only=True)
        try:
            titles = [
                str(t)
                for (t,) in con.execute(
                    "SELECT title FROM records USING SAMPLE 200 ROWS (reservoir, 7)"
                ).fetchall()
            ]
        finally:
            con.close()
        start = time.perf_counter()
        for title in titles[:TITLE_SEARCHES]:
            resolver.by_title(title)
        figures.append(Figure("title searches", len(titles) / (time.perf_counter() - start), "/s"))
    finally:
        resolver.close()

    figures += audit_figures(path, rng)

    keys = [f"10.5555/bench.{r}" for r in rows]
    con = duckdb.connect(str(path), read_only=True)
    try:
        start = time.perf_counter()
        for _ in range(5):
            con.execute(
                "SELECT record_id FROM records WHERE lower(doi) IN (SELECT unnest($1::VARCHAR[]))",
                [keys],
            ).fetchall()
        gauge = 5 * len(keys) / (time.perf_counter() - start)
    finally:
        con.close()
    figures.append(Figure("reference: DuckDB IN look-ups (load gauge)", gauge, "keys/s"))
    return figures


def audit_figures(path: Path, rng: random.Random) -> list[Figure]:
    """Answers/s of ``audit_many`` without and with the references check."""
    keyring = Keyring.demo_keyring()
    texts = _answers(path, keyring, rng)[:AUDITED]
    cited = [
        t + f"See also doi:10.5555/bench.{rng.randrange(RECORDS)} and PMID: "
        f"{FIRST_PMID + rng.randrange(RECORDS)}.\n"
        for t in texts
    ]
    figures = []
    with DuckDBCorpus(path) as corpus:
        corpus.identity()  # hash the file once, outside the timing
        for label, answers, check in (
            ("audit answers, references not checked", texts, False),
            ("audit answers, references checked (none)", texts, True),
            ("audit answers with 2 references, checked", cited, True),
        ):
            items = [AuditInput(f"a{i}.md", parse_answer(t), t) for i, t in enumerate(answers)]
            resolver = corpus.reference_resolver() if check else None
            try:
                start = time.perf_counter()
                for _ in audit_many(items, corpus, keyring, references=resolver):
                    pass
                seconds = time.perf_counter() - start
            finally:
                if resolver is not None:
                    resolver.close()
            figures.append(Figure(label, len(items) / seconds, "/s"))
    return figures
