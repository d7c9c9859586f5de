"""Audit throughput on a generated snapshot of 1,000,000 passages (``make bench``).

The snapshot is generated at run time straight into DuckDB with ``INSERT … SELECT FROM
range()`` (100,000 invented PubMed records × 10 passages, text that folding leaves unchanged),
with the real schema. Figures:

- the handle figures of :mod:`pipeline.bench.bench_handles` (parse, verify and mint from a
  string, beside raw ``hmac.digest`` and the peer when installed);
- quote checks/s — ``quote_in_passage`` (the quote folded each time) on ~400-character passages;
- audit citations/s and answers/s — ``audit_many`` over generated answers (10 citations each,
  half with quotes, some forged, malformed or unknown), pre-parsed, against the snapshot file;
- the same with ``parse_answer`` included (what ``citeseal audit`` does per file), the
  collector paced as ``citeseal audit`` paces it and at its default pace, interleaved
  (:func:`end_to_end_figures`): the pacing stays while it pays 10 %;
- the audit again on 1,000 of the answers with the report models built by pydantic's
  ``model_construct`` instead of :func:`audit.report.assemble`, interleaved
  (:func:`assembly_figures`): assemble stays while it pays 10 %;
- one answer at a time (10 citations), parse included, each design on answers it never saw:
  opening the snapshot per call as ``citeseal audit`` does, with the corpus kept open (each
  look-up a statement), kept open with its look-ups kept (:mod:`audit.lookup_cache`), and kept
  warm as a server keeps it (:meth:`~audit.duckdb_corpus.DuckDBCorpus.keep_warm`), with the
  time and RSS keeping it warm costs (:func:`one_answer_figures`).

The host these figures are taken on is shared: the batched figures also come per CPU-second
of this process (``time.process_time``, DuckDB's threads included), which another job's load
changes far less than the wall clock.
"""

from __future__ import annotations

import contextlib
import gc
import random
import shutil
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from audit import engine, overall
from audit.citations import parse_answer
from audit.corpus import Corpus
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import AuditInput, audit_answer, audit_many
from audit.folding import fold
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from audit.lookup_cache import LookupCache
from audit.quotes import quote_in_passage
from audit.report import _M, _omitted_when_none
from audit.warm import RECORD_BYTES, WARM_BUDGET
from pipeline.bench import Figure, rate
from pipeline.bench.bench_handles import FIRST_PMID, handle_figures
from pipeline.collector import fewer_collections
from pipeline.snapshot.schema import MIGRATIONS
from pipeline.snapshot.store import index_record_ids

RECORDS = 100_000
PASSAGES_PER_RECORD = 10
ANSWERS = 5_000
PEER_ONE_ANSWER = 852.0
"""The peer's citations/s auditing one answer against its own store (issue 17)."""
ONE_ANSWER_ROUNDS = 5
ONE_ANSWER_BATCH = 20
"""Answers per design and round, each audited by that design only once (distinct answers)."""
OLDER_ANSWERS = 2  # per round on the copy without indexes (a fifth of a second each)
CITATIONS_PER_ANSWER = 10
ROUND_TRIPS = 2_000
ASSEMBLY_ANSWERS = 1_000
ASSEMBLY_ROUNDS = 3
END_TO_END_ROUNDS = 3

# 12 words × ~6 chars × 6 repeats ≈ 400 characters of plain ASCII (folding changes nothing).
_TEXT_SQL = """
'Passage ' || p || ' of synthetic record ' || r || ': during ' || (r * 7 + p) % 90000 ||
' person-years of follow-up, ' || (r + p * 13) % 997 ||
' children were diagnosed with Farrow syndrome; zentravir exposure ' ||
CASE WHEN (r + p) % 2 = 0 THEN 'does not increase'
ELSE 'was not associated with' END || ' the risk (hazard ratio 0.' || (r % 90 + 10) ||
'). ' || repeat('The invented cohort was followed in an invented registry for invented outcomes. ',
3)
"""


def generate_snapshot(path: Path, *, indexed: bool = True) -> None:
    """Write a snapshot of RECORDS × PASSAGES_PER_RECORD passages with the real schema, its
    ``record_id`` indexes as a build writes them (``indexed``; without: a snapshot written
    before builds indexed them)."""
    con = duckdb.connect(str(path))
    try:
        con.execute("SET enable_progress_bar = false")
        for migration in MIGRATIONS:
            con.execute(migration.sql)
        con.execute(
            "INSERT INTO meta VALUES ('name', 'bench'), ('snapshot_id', 'bench-1'), "
            "('created_at', '2025-06-02T00:00:00Z')"
        )
        con.execute(
            "INSERT INTO sources (source, status) SELECT s, 'ok' FROM (VALUES ('pubmed'), "
            "('europepmc'), ('pubtator3'), ('crossref'), ('clinicaltrials'), ('openfda')) t(s)"
        )
        rid = f"'pmid:' || ({FIRST_PMID} + r)"
        con.execute(
            f"INSERT INTO records (record_id, version, source, content_hash, title, retracted, "  # noqa: S608
            f"expression_of_concern, preprint) SELECT {rid}, '1', 'pubmed', 'h', "
            f"'Synthetic record ' || r, r % 100 = 0, FALSE, FALSE FROM range({RECORDS}) t(r)"
        )
        con.execute(
            f"INSERT INTO record_versions SELECT {rid}, '1', 1, 'h', 'bench-1', 'bench-1', "  # noqa: S608
            f"'harvest' FROM range({RECORDS}) t(r)"
        )
        con.execute(
            f"INSERT INTO record_state SELECT {rid}, 'pubmed', '1', FALSE, NULL "  # noqa: S608
            f"FROM range({RECORDS}) t(r)"
        )
        con.execute(
            f"INSERT INTO relations SELECT {rid}, 'retraction_in', 'pmid:' || (98000000 + r), "  # noqa: S608
            f"'pubmed', NULL, NULL, NULL FROM range({RECORDS}) t(r) WHERE r % 100 = 0"
        )
        # in record order, as a build writes them (one record's passages in one batch)
        con.execute(
            f"INSERT INTO passages SELECT {rid}, '1', 'abstract.' || p, p, 'abstract', t, t "  # noqa: S608
            f"FROM (SELECT r, p, {_TEXT_SQL} AS t "
            f"FROM range({RECORDS}) a(r), range(1, {PASSAGES_PER_RECORD + 1}) b(p) ORDER BY r, p)"
        )
        if indexed:
            index_record_ids(con)
    finally:
        con.close()


def _texts(path: Path, keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "SELECT record_id, path, text FROM passages WHERE record_id IN "
            "(SELECT unnest(?::VARCHAR[]))",
            [[f"pmid:{FIRST_PMID + r}" for r, _ in keys]],
        ).fetchall()
    finally:
        con.close()
    found = {(int(rid[5:]) - FIRST_PMID, int(p.split(".")[1])): text for rid, p, text in rows}
    return {key: found[key] for key in keys}


def _rates(n: int, action: Callable[[], object]) -> tuple[float, float]:
    """``n`` per second of the wall clock and per CPU-second of this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return n / (time.perf_counter() - wall), n / (time.process_time() - cpu)


def _answers(path: Path, keyring: Keyring, rng: random.Random) -> list[str]:
    """ANSWERS answer texts of 5 sentences × 2 citations: ~70% genuine (half quoted), some
    misquoted, forged, malformed or citing records the snapshot does not hold."""
    picks = [
        (rng.randrange(RECORDS), rng.randrange(1, PASSAGES_PER_RECORD + 1))
        for _ in range(ANSWERS * CITATIONS_PER_ANSWER)
    ]
    texts = _texts(path, sorted(set(picks)))
    answers = []
    for a in range(ANSWERS):
        sentences = []
        for s in range(CITATIONS_PER_ANSWER // 2):
            cites = []
            for c in range(2):
                r, p = picks[a * CITATIONS_PER_ANSWER + s * 2 + c]
                handle = mint(keyring, parse_locator(f"pmid:{FIRST_PMID + r}/abstract.{p}"))
                roll = rng.random()
                if roll < 0.35:
                    words = texts[(r, p)].split()
                    start = rng.randrange(0, len(words) - 8)
                    cites.append(f'[{handle} "{" ".join(words[start : start + 8])}"]')
                elif roll < 0.70:
                    cites.append(f"[{handle}]")
                elif roll < 0.80:
                    cites.append(f'[{handle} "children were diagnosed with Farrow disease"]')
                elif roll < 0.88:
                    cites.append(f"[{handle[:-1]}{'0' if handle[-1] != '0' else '1'}]")
                elif roll < 0.94:
                    cites.append(f"[pmid:{FIRST_PMID + r}-abstract]")
                else:
                    unknown = mint(keyring, parse_locator(f"pmid:{FIRST_PMID - 1 - r}/abstract.1"))
                    cites.append(f"[{unknown}]")
            sentences.append(f"Claim {s + 1} of answer {a} about zentravir {' '.join(cites)}.")
        sentences.append("An uncited closing remark.")
        answers.append(" ".join(sentences) + "\n")
    return answers


def end_to_end_figures(
    answers: list[str], citations: int, corpus: Corpus, keyring: Keyring
) -> list[Figure]:
    """Parse + audit of ``answers`` as ``citeseal audit`` runs it (the garbage collector
    paced by :func:`~pipeline.collector.fewer_collections`) and with the collector at its
    default pace, medians of :data:`END_TO_END_ROUNDS` interleaved rounds: the pacing stays
    while it pays 10 % per CPU-second (the collector's time is this process's; on the shared
    host the wall clock is mostly the other jobs')."""

    def parse_and_audit() -> None:
        stream = (AuditInput(f"answer-{i}.md", parse_answer(t)) for i, t in enumerate(answers))
        for _ in audit_many(stream, corpus, keyring):
            pass

    def paced() -> None:
        with fewer_collections():
            parse_and_audit()

    rounds: dict[str, list[tuple[float, float]]] = {}
    for _ in range(END_TO_END_ROUNDS):
        rounds.setdefault("paced", []).append(_rates(citations, paced))
        rounds.setdefault("default", []).append(_rates(citations, parse_and_audit))
    wall, cpu = (statistics.median(r[i] for r in rounds["paced"]) for i in (0, 1))
    plain, plain_cpu = (statistics.median(r[i] for r in rounds["default"]) for i in (0, 1))
    return [
        Figure("parse + audit citations", wall, "/s", 20_000),
        Figure("  per CPU-second", cpu, "/s"),
        Figure("  parse + audit, the collector at its default pace", plain, "/s"),
        Figure("  per CPU-second", plain_cpu, "/s"),
        Figure("  fewer_collections over it, per CPU-second", cpu / plain_cpu, "×", 1.1),
        Figure(
            f"  ({END_TO_END_ROUNDS} interleaved rounds; slowest paced round)",
            min(r[0] for r in rounds["paced"]),
            "/s",
        ),
    ]


def constructed(cls: type[_M], /, **values: Any) -> _M:
    """What :func:`audit.report.assemble` builds, by pydantic's own ``model_construct`` (no
    validation either): the simple design that assemble's direct writes of pydantic's
    private attributes are kept against."""
    for name in _omitted_when_none(cls):  # left out of the dump when None: not "set" then
        if name in values and values[name] is None:
            del values[name]
    return cls.model_construct(**values)


@contextlib.contextmanager
def assembled_by(build: Callable[..., Any]) -> Iterator[None]:
    """Report models built by ``build`` instead of :func:`audit.report.assemble` while open."""
    modules = (engine, overall)
    kept = [module.assemble for module in modules]
    for module in modules:
        setattr(module, "assemble", build)  # noqa: B010 (the modules' own name for it)
    try:
        yield
    finally:
        for module, original in zip(modules, kept, strict=True):
            setattr(module, "assemble", original)  # noqa: B010


def assembly_figures(inputs: list[AuditInput], corpus: Corpus, keyring: Keyring) -> list[Figure]:
    """The audit with report models assembled as the engine does and by ``model_construct``,
    medians of :data:`ASSEMBLY_ROUNDS` interleaved rounds: assemble stays while it pays 10 %."""
    citations = sum(len(s.citations) for item in inputs for s in item.parsed.sentences)

    def audit() -> None:
        for _ in audit_many(inputs, corpus, keyring):
            pass

    rounds: dict[str, list[float]] = {}
    for _ in range(ASSEMBLY_ROUNDS):
        rounds.setdefault("assemble", []).append(rate(citations, audit))
        with assembled_by(constructed):
            rounds.setdefault("construct", []).append(rate(citations, audit))
    ours, plain = (statistics.median(rounds[k]) for k in ("assemble", "construct"))
    return [
        Figure(f"  audit citations ({citations:,}), models by model_construct", plain, "/s"),
        Figure("  report.assemble over it", ours / plain, "×", 1.1),
    ]


def run(workdir: Path) -> list[Figure]:
    rng = random.Random(20250602)
    keyring = Keyring.demo_keyring()
    path = workdir / "bench.duckdb"
    start = time.perf_counter()
    generate_snapshot(path)
    generated = time.perf_counter() - start
    figures = [
        Figure("generate snapshot (1,000,000 passages)", generated, "s", None, False),
    ]

    figures += handle_figures(workdir, keyring)

    sample = _texts(path, [(r, 3) for r in range(0, RECORDS, 50)])
    pairs = []
    for text in sample.values():
        words = text.split()
        start = rng.randrange(0, len(words) - 10)
        pairs.append((" ".join(words[start : start + 10]), fold(text)))
    pairs = pairs * (200_000 // len(pairs))
    figures.append(
        Figure(
            "quote checks",
            rate(len(pairs), lambda: [quote_in_passage(q, p) for q, p in pairs]),
            "/s",
            100_000,
        )
    )

    answers = _answers(path, keyring, rng)
    parsed = [AuditInput(f"answer-{i}.md", parse_answer(text)) for i, text in enumerate(answers)]
    citations = sum(len(s.citations) for item in parsed for s in item.parsed.sentences)
    with DuckDBCorpus(path) as corpus:
        corpus.identity()  # hash the file once, outside the timing (done once per run)
        engine, engine_cpu = _rates(citations, lambda: list(audit_many(parsed, corpus, keyring)))

        end_to_end = end_to_end_figures(answers, citations, corpus, keyring)
    per_answer = len(parsed) / citations
    figures += [
        Figure(
            f"audit citations ({citations:,} in {len(parsed):,} answers)",
            engine,
            "/s",
            20_000,
        ),
        Figure("  per CPU-second", engine_cpu, "/s"),
        Figure("audit answers", engine * per_answer, "/s"),
        *end_to_end,
        Figure("parse + audit answers", end_to_end[0].value * per_answer, "/s"),
    ]
    with DuckDBCorpus(path) as corpus:
        figures += assembly_figures(parsed[:ASSEMBLY_ANSWERS], corpus, keyring)
    older = without_indexes(path, workdir / "bench-before-indexes.duckdb")
    return figures + one_answer_figures(path, keyring, answers, older)


def without_indexes(path: Path, copy: Path) -> Path:
    """``copy``: the snapshot at ``path`` as a build wrote it before builds indexed
    ``record_id`` (the same rows, no index), to time one answer before and after."""
    shutil.copyfile(path, copy)
    con = duckdb.connect(str(copy))
    try:
        for (name,) in con.execute("SELECT index_name FROM duckdb_indexes()").fetchall():
            con.execute(f'DROP INDEX "{name}"')
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return copy


def _rss_mib() -> float:
    """This process's resident set (``VmRSS``) in MiB, after a full collection; 0 off Linux."""
    gc.collect()
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return 0.0
    kib = next((int(line.split()[1]) for line in status.splitlines() if line[:6] == "VmRSS:"), 0)
    return kib / 1024


def _kept_warm(path: Path, sha256: str, budget: int) -> tuple[DuckDBCorpus, list[Figure], str]:
    """A corpus opened and kept warm within ``budget``; the time it took, its estimate and the
    RSS it added (figures named by what it held)."""
    before, start = _rss_mib(), time.perf_counter()
    corpus = DuckDBCorpus(path, sha256=sha256)
    warmth = corpus.keep_warm(budget)
    took = time.perf_counter() - start
    what = "records and passages" if warmth.passages is not None else "records"
    figures = [
        Figure(f"open and keep the {what} warm", took, "s", None, False),
        Figure(
            f"  estimate of what it holds (budget {budget / 2**20:,.0f} MiB)",
            warmth.estimate / 2**20,
            "MiB",
        ),
        Figure("  RSS it added (DuckDB's cached blocks included)", _rss_mib() - before, "MiB"),
    ]
    return corpus, figures, what


def one_answer_figures(
    path: Path, keyring: Keyring, answers: list[str], older: Path | None = None
) -> list[Figure]:
    """One answer at a time against the snapshot, parse included, each design auditing answers
    it never saw (a fresh slice of ``answers`` per design and round: no look-up is flattered
    by an earlier one), in interleaved rounds: as ``citeseal audit`` does per call (open the
    file, audit, close; the file is hashed once per run, outside); kept open, every look-up a
    statement (the design before keep_warm); kept open with its look-ups kept
    (:mod:`audit.lookup_cache`), on first sight and on the same answers again; kept warm
    (:meth:`DuckDBCorpus.keep_warm`: every record and passage in memory, as a server holds
    them) and with only the records warm (the budget's fallback tier); and kept open on
    ``older`` (the snapshot without its ``record_id`` indexes, a few answers a round). Medians,
    citations/s (goal: 5× the peer's one answer against its own store,
    :data:`PEER_ONE_ANSWER`), with the time to open and keep warm and the RSS it adds, beside
    DuckDB's own floor in the same rounds (``SELECT 1`` round trips on a kept connection)."""
    identity = DuckDBCorpus(path)
    sha256 = identity.identity().sha256
    identity.close()
    pool = iter(answers)
    cited: list[int] = []  # citations per answer audited
    rounds: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack:
        con = duckdb.connect(str(path), read_only=True)
        stack.callback(con.close)
        ((records,),) = con.execute("SELECT count(*) FROM record_state").fetchall()
        warm, warm_figures, _ = _kept_warm(path, sha256, WARM_BUDGET)
        stack.callback(warm.close)
        tier, tier_figures, tier_held = _kept_warm(path, sha256, records * RECORD_BYTES)
        stack.callback(tier.close)
        kept = stack.enter_context(DuckDBCorpus(path, sha256=sha256))
        served = stack.enter_context(DuckDBCorpus(path, sha256=sha256, cache=LookupCache()))
        before = (
            None if older is None else stack.enter_context(DuckDBCorpus(older, sha256="0" * 64))
        )

        def fresh(count: int) -> list[tuple[str, int]]:
            picked = [next(pool) for _ in range(count)]
            batch = [(a, sum(len(s.citations) for s in parse_answer(a).sentences)) for a in picked]
            cited.extend(n for _, n in batch)
            return batch

        def timed(name: str, batch: list[tuple[str, int]], audit: Callable[[str], object]) -> None:
            def each() -> None:
                for answer, _ in batch:
                    audit(answer)

            wall, cpu = _rates(sum(n for _, n in batch), each)
            rounds.setdefault(name, []).append(wall)
            rounds.setdefault(f"{name} cpu", []).append(cpu)

        def on(corpus: DuckDBCorpus) -> Callable[[str], object]:
            return lambda answer: audit_answer(parse_answer(answer), corpus, keyring)

        def per_call(answer: str) -> None:
            with DuckDBCorpus(path, sha256=sha256) as corpus:
                audit_answer(parse_answer(answer), corpus, keyring)

        def round_trips() -> None:
            for _ in range(ROUND_TRIPS):
                con.execute("SELECT 1").fetchall()

        for _ in range(ONE_ANSWER_ROUNDS):
            timed("call", fresh(ONE_ANSWER_BATCH), per_call)
            timed("kept", fresh(ONE_ANSWER_BATCH), on(kept))
            seen = fresh(ONE_ANSWER_BATCH)
            timed("served", seen, on(served))
            timed("served again", seen, on(served))
            timed("tier", fresh(ONE_ANSWER_BATCH), on(tier))
            timed("warm", fresh(ONE_ANSWER_BATCH), on(warm))
            if before is not None:
                timed("older", fresh(OLDER_ANSWERS), on(before))
            rounds.setdefault("trips", []).append(rate(ROUND_TRIPS, round_trips))
    median = {name: statistics.median(values) for name, values in rounds.items()}
    ratio = {  # of the same rounds: each round's design over the statements of that round
        name: statistics.median(a / b for a, b in zip(rounds[name], rounds["kept"], strict=True))
        for name in ("warm", "tier")
    }
    goal = 5 * PEER_ONE_ANSWER
    figures = [
        Figure(
            f"one answer per call ({statistics.mean(cited):.0f} citations; open, audit, close)",
            median["call"],
            "/s",
            goal,
        ),
        Figure("one answer, kept open, each a statement (cold)", median["kept"], "/s", goal),
        Figure("  per CPU-second", median["kept cpu"], "/s"),
        Figure("one answer, kept open, look-ups kept: first sight", median["served"], "/s"),
        Figure("  the same answers again (look-ups kept: warm)", median["served again"], "/s"),
        Figure("one answer, kept warm (records and passages)", median["warm"], "/s", goal),
        Figure("  per CPU-second", median["warm cpu"], "/s"),
        Figure("  kept warm over each a statement, same rounds", ratio["warm"], "×", 1.1),
        Figure(f"one answer, only the {tier_held} kept warm", median["tier"], "/s"),
        Figure("  over each a statement, same rounds", ratio["tier"], "×", 1.1),
    ]
    if "older" in median:
        figures.append(
            Figure(
                "  kept open on the snapshot without its record_id indexes", median["older"], "/s"
            )
        )
    rounds_note = (
        f"  ({ONE_ANSWER_ROUNDS} interleaved rounds of {ONE_ANSWER_BATCH} answers never audited "
        "before per design; citations/s)"
    )
    return [
        *figures,
        Figure("  reference: DuckDB round trips (SELECT 1), same rounds", median["trips"], "/s"),
        Figure(rounds_note, 0, "", note=True),
        *warm_figures,
        *tier_figures,
    ]
