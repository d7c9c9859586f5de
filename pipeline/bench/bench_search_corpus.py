"""The search bench's corpus: synthetic works with known topics, and queries labelled from them.

Every *work* is one invented paper with a topic — a condition, a drug, an outcome and a study
design, drawn from the vocabularies below with a seeded :class:`random.Random` — written as
one to three records in our formats (:class:`pipeline.records.Record`): its PubMed record,
with a probability :data:`EPMC_SHARE` a Europe PMC copy (same PMID, a PMCID), with a
probability :data:`PREPRINT_SHARE` a preprint (``ppr:``, ``preprint_of`` the PubMed record).
Each passage is written from sentences whose *stated facets* the generator records: the
title states the condition and the drug, the methods the design, the drug and the condition,
the results the drug and the outcome, and so on. Some passages also mention *another*
condition, drug or outcome in passing (a comparator, a differential diagnosis): lexical traps
the labels do not reward.

Labels follow from the generation alone, never from a ranker. A query asks for a set of facets
(e.g. drug = zentravir and outcome = hepatic injury); a passage's grade is

    0  its work's topic lacks a facet of the query (whatever words the passage holds)
    1  its work has every facet, the passage states none of them
    2  its work has every facet, the passage states some of them
    3  its work has every facet, the passage states all of them

and a work's grade is the best grade of its passages (:func:`grade`). The same generator
with a larger ``works`` count writes the latency bench's 1M-passage snapshot
(:func:`write_snapshot`: the real schema, ``records`` rows, search index and stored works, as
a build writes them), keyed by :data:`GENERATOR_VERSION`, the schema version and a digest of
the writer's source (:func:`pipeline.bench.bench_search.writer_digest`) so a rerun reuses it.
"""

from __future__ import annotations

import functools
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from audit.folding import fold
from pipeline.records import Flags, Passage, Record, Relation
from pipeline.snapshot.apply import StagedBatch, apply_batch
from pipeline.snapshot.index import INDEX_VERSION, ascii_words
from pipeline.snapshot.ingest import record_row
from pipeline.snapshot.schema import MIGRATIONS, SCHEMA_VERSION
from pipeline.snapshot.store import BatchWriter, connect, index_record_ids, load_fts
from pipeline.snapshot.works import store_works

GENERATOR_VERSION = "search-corpus-5"  # 5: passages indexed by record id
"""Change whenever the generator writes different records (the latency cache is keyed by it)."""

FIRST_ID = 99_300_000
EPMC_SHARE = 0.3
PREPRINT_SHARE = 0.1
TRAP_SHARE = 0.3
SYNONYM_SHARE = 0.4  # a body passage names the outcome or design by its synonym
FILLER_PASSAGES = (2, 5)  # each record's extra passages of generic text, inclusive bounds


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


CONDITIONS = tuple(
    f"{name} {'syndrome' if n % 2 == 0 else 'disease'}"
    for n, name in enumerate(
        _words(
            "farrow kessling tamber orvane pellix dravon quessa lumbrin sarcet velden mortix "
            "halvard ombrel pricket castell dunmore evrett gorsan ilvane jastro"
        )
    )
)
DRUGS = _words(
    "zentravir quolimab baxetrine dorvacept elmuzole faltrexin gavopride hestinol "
    "ivlarsen jorbutane kelvatide lomarin mepraxol norvestat oxatrevin pelorzine "
    "quintavan revastide solbuxan tiremab"
)
OUTCOMES = (
    "hepatic injury",
    "all-cause mortality",
    "hospital admission",
    "renal failure",
    "weight gain",
    "seizure recurrence",
    "bleeding events",
    "sleep quality",
)
DESIGNS = (
    "randomised controlled trial",
    "prospective cohort study",
    "case report",
    "meta-analysis",
    "systematic review",
)
SYNONYMS = {
    "hepatic injury": "liver damage",
    "all-cause mortality": "death from any cause",
    "hospital admission": "inpatient stays",
    "renal failure": "kidney insufficiency",
    "weight gain": "increase in body mass",
    "seizure recurrence": "further convulsions",
    "bleeding events": "haemorrhage",
    "sleep quality": "restful nights",
    "randomised controlled trial": "placebo-masked allocation study",
    "prospective cohort study": "longitudinal follow-up of an inception group",
    "case report": "single patient description",
    "meta-analysis": "pooled quantitative synthesis",
    "systematic review": "structured literature appraisal",
}
"""Another name for each outcome and design, sharing no index term with it: a passage that
uses it states the facet (its label says so) but a lexical ranker cannot see it."""
FILLER = _words(
    "participants baseline analysis adjusted confidence interval follow-up incidence dose "
    "observed reduced increased protocol sample enrolled measured reported secondary "
    "primary endpoint median range visits clinic centres regional national registry data "
    "collected month year weeks age sex scores assessed blinded investigators sites "
    "screening"
)


@dataclass(frozen=True)
class Topic:
    condition: str
    drug: str
    outcome: str
    design: str

    def facets(self) -> frozenset[tuple[str, str]]:
        return frozenset(
            {
                ("condition", self.condition),
                ("drug", self.drug),
                ("outcome", self.outcome),
                ("design", self.design),
            }
        )


@dataclass(frozen=True)
class Work:
    """One generated paper: its id (its PubMed record's id), topic and records, and the
    facets each passage states (keyed by record id and path)."""

    work_id: str
    topic: Topic
    records: tuple[Record, ...]
    stated: dict[tuple[str, str], frozenset[tuple[str, str]]]


@dataclass(frozen=True)
class Query:
    kind: str  # condition | drug | outcome | design: what the question is mainly about
    text: str
    facets: frozenset[tuple[str, str]]


def _filler(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(n)).capitalize() + "."


def _other(rng: random.Random, pool: tuple[str, ...], not_this: str) -> str:
    return rng.choice([x for x in pool if x != not_this])


def _passages(
    rng: random.Random, topic: Topic, n: int
) -> tuple[list[tuple[str, str, str]], list[frozenset[tuple[str, str]]]]:
    """The passages (path, section, text) of one record and the facets each states."""
    c, d, o, g = topic.condition, topic.drug, topic.outcome, topic.design
    title = f"{d.capitalize()} in {c}"
    title_states = {("condition", c), ("drug", d)}
    if rng.random() < 0.5:
        title += f": a {g}"
        title_states.add(("design", g))
    background = f"{c.capitalize()} is a chronic condition. {_filler(rng, 8)}"
    if rng.random() < TRAP_SHARE:  # a differential diagnosis: another condition in passing
        background += f" It is often mistaken for {_other(rng, CONDITIONS, c)}."

    def named(facet: str) -> str:
        return SYNONYMS[facet] if rng.random() < SYNONYM_SHARE else facet

    methods = f"We conducted a {named(g)} of {d} in {rng.randint(20, 900)} adults with {c}. "
    methods += _filler(rng, 10)
    results = f"{d.capitalize()} was associated with less {named(o)} ({_filler(rng, 6)})"
    if rng.random() < TRAP_SHARE:  # a comparator drug in passing
        results += f" Patients had previously received {_other(rng, DRUGS, d)}."
    conclusions = f"These findings support further study. {_filler(rng, 12)}"
    rows = [
        ("title", "title", title),
        ("abstract.1", "background", background),
        ("abstract.2", "methods", methods),
        ("abstract.3", "results", results),
        ("abstract.4", "conclusions", conclusions),
    ]
    stated = [
        frozenset(title_states),
        frozenset({("condition", c)}),
        frozenset({("design", g), ("drug", d), ("condition", c)}),
        frozenset({("drug", d), ("outcome", o)}),
        frozenset(),
    ]
    for k in range(n):
        rows.append((f"abstract.{5 + k}", "discussion", _filler(rng, rng.randint(15, 30))))
        stated.append(frozenset())
    return rows, stated


def _add(
    records: list[Record],
    stated: dict[tuple[str, str], frozenset[tuple[str, str]]],
    record: Record,
    facets: list[frozenset[tuple[str, str]]],
) -> None:
    records.append(record)
    for passage, states in zip(record.passages, facets, strict=True):
        stated[(record.record_id, passage.path)] = states


def generate(works: int, seed: int = 21) -> Iterator[Work]:
    """``works`` generated works, the same for the same ``works`` and ``seed``."""
    rng = random.Random(seed)
    for n in range(works):
        topic = Topic(
            rng.choice(CONDITIONS), rng.choice(DRUGS), rng.choice(OUTCOMES), rng.choice(DESIGNS)
        )
        ident = FIRST_ID + n
        pmid, year = str(ident), rng.randint(2005, 2025)
        clean = Flags(retracted=False, expression_of_concern=False, preprint=False)
        extra = rng.randint(*FILLER_PASSAGES)
        rows, stated_list = _passages(rng, topic, extra)
        records: list[Record] = []
        stated: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
        add = functools.partial(_add, records, stated)

        passages = [Passage(path=p, section=s, text=t) for p, s, t in rows]
        common = {"version": "1", "title": rows[0][2], "year": year, "flags": clean}
        add(
            Record(
                record_id=f"pmid:{pmid}",
                source="pubmed",
                pmid=pmid,
                doi=f"10.5555/search-bench.{ident}",
                passages=passages,
                **common,  # type: ignore[arg-type]
            ),
            stated_list,
        )
        if rng.random() < EPMC_SHARE:
            add(
                Record(
                    record_id=f"pmcid:PMC{ident}",
                    source="europepmc",
                    pmid=pmid,
                    pmcid=f"PMC{ident}",
                    passages=passages,
                    **common,  # type: ignore[arg-type]
                ),
                stated_list,
            )
        if rng.random() < PREPRINT_SHARE:
            pre_rows, pre_stated = _passages(rng, topic, extra)
            add(
                Record(
                    record_id=f"ppr:PPR{ident}",
                    source="europepmc",
                    version="1",
                    title=pre_rows[0][2],
                    year=year - 1,
                    flags=Flags(retracted=False, expression_of_concern=False, preprint=True),
                    relations=[
                        Relation(kind="preprint_of", target=f"pmid:{pmid}", source="europepmc")
                    ],
                    passages=[Passage(path=p, section=s, text=t) for p, s, t in pre_rows],
                ),
                pre_stated,
            )
        yield Work(f"pmid:{pmid}", topic, tuple(records), stated)


def queries(works: list[Work], seed: int = 21) -> list[Query]:
    """The labelled question set: 55 queries about the topics ``works`` hold (each has at
    least one relevant work): 12 about a condition, 18 about a drug (with its condition or
    outcome), 15 about an outcome of a drug, 10 about a study design in a condition."""
    rng = random.Random(seed)
    topics = {w.topic for w in works}

    def pairs(first: str, second: str) -> list[tuple[str, str]]:
        """The distinct (first, second) facet values the works hold, in a fixed order."""
        return sorted({(getattr(t, first), getattr(t, second)) for t in topics})

    out: list[Query] = []
    for c in rng.sample(sorted({t.condition for t in topics}), 12):
        text = f"patients with {c}" if len(out) % 2 else c
        out.append(Query("condition", text, frozenset({("condition", c)})))
    for d, c in rng.sample(pairs("drug", "condition"), 10):
        out.append(Query("drug", f"{d} for {c}", frozenset({("drug", d), ("condition", c)})))
    for d in rng.sample(sorted({t.drug for t in topics}), 8):
        out.append(Query("drug", d, frozenset({("drug", d)})))
    for o, d in rng.sample(pairs("outcome", "drug"), 15):
        out.append(Query("outcome", f"{o} with {d}", frozenset({("drug", d), ("outcome", o)})))
    for g, c in rng.sample(pairs("design", "condition"), 10):
        out.append(Query("design", f"{g} in {c}", frozenset({("design", g), ("condition", c)})))
    return out


def grade(query: Query, work: Work, stated: frozenset[tuple[str, str]]) -> int:
    """The grade of a passage of ``work`` stating ``stated`` for ``query`` (module docstring)."""
    if not query.facets <= work.topic.facets():
        return 0
    said = query.facets & stated
    return 3 if said == query.facets else 2 if said else 1


def labels(query: Query, works: list[Work]) -> dict[tuple[str, str], tuple[str, int]]:
    """Every passage of a relevant work: (record id, path) → (work id, grade ≥ 1)."""
    out: dict[tuple[str, str], tuple[str, int]] = {}
    for work in works:
        if query.facets <= work.topic.facets():
            for key, stated in work.stated.items():
                out[key] = (work.work_id, grade(query, work, stated))
    return out


CHUNK = 2_000  # works per staged batch


def write_snapshot(path: Path, works: Iterator[Work]) -> tuple[int, int]:
    """Write ``works`` as a snapshot at ``path`` with the real schema, ``records`` rows and
    search index (the batch path of a build: :func:`pipeline.snapshot.apply.apply_batch`);
    unsealed (the bench opens it directly). Returns (records, passages)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = connect(path)
    n_records = n_passages = 0
    try:
        for migration in MIGRATIONS:
            con.execute(migration.sql)
        meta = {
            "name": "search-bench",
            "snapshot_id": path.stem,
            "created_at": "2026-12-01T00:00:00Z",
            "schema_version": str(SCHEMA_VERSION),
            "tool_version": GENERATOR_VERSION,
            "search_index": INDEX_VERSION,
        }
        con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
        con.execute("INSERT INTO sources (source, status) VALUES ('pubmed', 'ok')")
        con.execute("INSERT INTO sources (source, status) VALUES ('europepmc', 'ok')")
        load_fts(con)
        con.execute("SET enable_progress_bar = false")
        writer = BatchWriter(path.parent / f"{path.stem}.staging")
        chunk: list[Record] = []
        for work in works:
            chunk.extend(work.records)
            if len(chunk) >= CHUNK:
                n_passages += _write_chunk(con, writer, chunk, path.stem, n_passages)
                n_records += len(chunk)
                chunk = []
        if chunk:
            n_passages += _write_chunk(con, writer, chunk, path.stem, n_passages)
            n_records += len(chunk)
        store_works(con)  # what a build does last (pipeline.snapshot.build)
        index_record_ids(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
        shutil.rmtree(path.parent / f"{path.stem}.staging", ignore_errors=True)
    return n_records, n_passages


def _write_chunk(
    con: duckdb.DuckDBPyConnection, writer: BatchWriter, records: list[Record], sid: str, docid: int
) -> int:
    passages = []
    for record in records:
        for seq, p in enumerate(record.passages, start=1):
            folded = fold(p.text)
            passages.append(
                (
                    docid + len(passages) + 1,
                    record.record_id,
                    "1",
                    p.path,
                    seq,
                    p.section,
                    p.text,
                    None if folded == p.text else folded,
                    ascii_words(p.text),
                )
            )
    batch = StagedBatch(
        records=writer.stage("records", (record_row(r, "1", f"h-{r.record_id}") for r in records)),
        versions=writer.stage(
            "record_versions", ((r.record_id, "1", 1, "h", sid, sid, "harvest") for r in records)
        ),
        passages=writer.stage("passages_docs", passages),
        relations=writer.stage(
            "relations",
            (
                (r.record_id, rel.kind, rel.target, rel.source, None, None, sid)
                for r in records
                for rel in r.relations
            ),
        ),
    )
    apply_batch(con, batch, sid)
    state = writer.stage("seen", ((r.record_id, r.source, "1") for r in records))
    if state is not None:
        con.execute(
            "INSERT INTO record_state SELECT record_id, source, version, FALSE, NULL "  # noqa: S608
            f"FROM {state.source}"
        )
        state.done()
    return len(passages)
