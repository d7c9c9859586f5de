"""The server's core: bounded inputs in, a JSON-ready result and a text block out.

Each function takes the :class:`Served` snapshot (trusted before the server started) and the
tool's plain arguments, checks every bound itself (so a model gets one exact, actionable
sentence, not a validator dump), and calls the code the CLI uses: ``search_page`` and
``record_passages`` (:mod:`pipeline.snapshot.search`), ``parse_answer`` / ``parse_claims`` and
the audit engine. Errors are :class:`~audit.errors.CiteSealError` subclasses only; the MCP
layer turns them into ``isError`` results.

Connections (:class:`Served`): one read-only base connection is opened when the server
starts; every call reads through its own cursor of it (``base.cursor()``, DuckDB's way to use
one database from several threads) and first checks that the file is still the one that was
trusted. Measured on the demo snapshot: a cursor costs ~0.01 ms, while opening a connection
per call costs ~175 ms when none stays open (the database is re-attached each time) and a
second connection with another configuration is refused by DuckDB in the same process — the
audit's corpus therefore reads through a cursor too. No call holds a lock while it runs.

Two hooks of :class:`Served` do nothing here: :meth:`Served.ensure_records` (before a fetch)
and :meth:`Served.ensure_search` (after a search). With ``--online``
(:class:`pipeline.serve.online.LiveServed`) they harvest what the snapshot lacks into a sealed
child, and every call reads the newest one.

Limits (also advertised in the tools' input schemas) are the ``MAX_*`` constants below and
the parsers' own (:data:`audit.citations.MAX_ANSWER_CHARS`, :data:`audit.claims.MAX_CLAIMS_BYTES`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from audit import CONTRACT_VERSION, folding, handles
from audit.citations import (
    MAX_ANSWER_CHARS,
    MAX_CITATIONS_PER_SENTENCE,
    MAX_QUOTE_CHARS,
    parse_answer,
)
from audit.claims import MAX_CLAIMS_BYTES, parse_claims
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import CitationInput, audit_answer, judge_citations
from audit.errors import InputError, LimitExceeded
from audit.keys import Keyring
from audit.render_text import render_support_check, render_text
from audit.report import (
    DEFAULT_FAIL_ON,
    FAIL_ON_ITEMS,
    FLAG_NAMES,
    VERDICTS,
    CitationResult,
    fail_on_items,
)
from audit.support.judges import DEFAULT_JUDGE, judge_by_name
from audit.support.model import Judge
from audit.support.run import (
    MAX_CLAIM_CHARS,
    MAX_SUPPORT_HANDLE_CHARS,
    MAX_SUPPORT_HANDLES,
    check_support,
)
from audit.terminal import one_line
from pipeline.serve.cursor import MAX_CURSOR_CHARS, SearchKey, issue_cursor, read_cursor
from pipeline.serve.doc_text import doc_block, folding_steps
from pipeline.snapshot.filters import SearchFilters, make_filters, undecided_lines, work_lines
from pipeline.snapshot.listing import find_page
from pipeline.snapshot.search import (
    MAX_QUERY_CHARS,
    PassageView,
    RecordView,
    SearchPage,
    also_text,
    check_query,
    held_statuses,
    record_passages,
)
from pipeline.snapshot.trust import TrustedSnapshot

SERVED_CHANGE = {
    "since": "since the server trusted it",
    "advice": "restart citeseal serve once nothing is writing the file",
}
"""How a served snapshot that changed is refused: trusted at start, a retry cannot help."""
MAX_RESULTS = 50
"""At most this many passages per search."""
MAX_RECORDS = 20
"""At most this many record ids per ``fetch_passages``."""
MAX_PASSAGES = 200
"""At most this many passages per record in ``fetch_passages`` (the rest are counted)."""
MAX_HANDLES = 100
"""At most this many handles per ``resolve_handles``."""
MAX_HANDLE_CHARS = 400
"""A handle is at most ~300 characters by its grammar; longer text is refused unread."""
MAX_ID_CHARS = 100

LITERATURE = ("pubmed", "europepmc", "pubtator3", "crossref")
TRIALS = ("clinicaltrials",)
DRUG_LABELS = ("openfda",)
DOCUMENTS = ("local",)  # the user's own documents ([local]: PDF pages, Markdown, text)
SEARCHES: dict[str, tuple[str, ...]] = {
    "literature": LITERATURE,
    "trials": TRIALS,
    "drug_labels": DRUG_LABELS,
    "documents": DOCUMENTS,
}

VERDICT_MEANINGS: dict[str, str] = {
    "malformed": "the handle does not parse under the grammar",
    "forged": "the check code does not verify under the key (invented or altered handle)",
    "unavailable": "the record or passage is not in this snapshot, or its source did not "
    "harvest completely",
    "withdrawn": "the record was withdrawn upstream",
    "quote_mismatch": "the quote is not in the passage (after folding)",
    "ok": "the handle verifies and the quote (if any) is in the passage",
}
"""One line per verdict, in ladder order (the first that applies wins)."""


class Served:
    """What every tool reads: the snapshot that passed its checks, the minting keyring, and
    the base connection every call takes its own cursor of (close it with :meth:`close`)."""

    online = False  # True: calls may harvest live (pipeline.serve.online.LiveServed)

    def __init__(self, trusted: TrustedSnapshot, keyring: Keyring) -> None:
        self.trusted = trusted
        self.keyring = keyring
        self._base = trusted.search_connection()
        self._lock = threading.Lock()
        # Checked and read once (shape, meta, source statuses); each call reads through its
        # own cursor (:meth:`corpus`).
        self._corpus = DuckDBCorpus(
            trusted.path, sha256=trusted.sha256, connection=self._base.cursor()
        )
        self._corpus.source_status()  # now, before calls on several threads share it

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor for one call, after checking the file did not change since it was trusted."""
        with self._lock:  # creating a cursor touches the base connection; using it does not
            cursor = self._base.cursor()
        try:
            self.trusted.still_unchanged(**SERVED_CHANGE)
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def corpus(self) -> Iterator[DuckDBCorpus]:
        """The audit's corpus for one call, reading through its own cursor (what the served
        snapshot's corpus read when the server started is not read again)."""
        with self.cursor() as cursor:
            yield self._corpus.reading_through(cursor)

    def ensure_records(self, record_ids: Sequence[str]) -> None:
        """Before a fetch: nothing (``--online`` harvests the ids the snapshot lacks,
        :class:`pipeline.serve.online.LiveServed`)."""
        del record_ids

    def ensure_search(self, query: str, limit: int, sources: Sequence[str], found: int) -> bool:
        """After a search that found ``found`` passages: nothing, False (``--online`` may
        harvest the query and answer True: search again)."""
        del query, limit, sources, found
        return False

    def close(self) -> None:
        self._corpus.close()
        self._base.close()

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Outcome:
    """A tool's result: the structured value and the text block a model reads."""

    value: BaseModel
    text: str


class SearchResult(BaseModel):
    query: str | None = Field(
        description="The query; null for a drug's labels listed newest first (no query)."
    )
    sources: list[str]
    demo_key: bool = Field(description="Handles were minted with the public demo key.")
    results: list[PassageView]
    filters: dict[str, Any] = Field(
        default_factory=dict, description="The filters applied, as parsed."
    )
    offset: int = Field(default=0, description="Position of the first result in the ranking.")
    total: int = Field(
        default=0,
        description="Works (one result each) with a passage that matches the query and filters.",
    )
    passages: int = Field(default=0, description="Passages that match the query and filters.")
    excluded_unknown: dict[str, int] = Field(
        default_factory=dict,
        description="Per filter: records left out because the filter could not decide "
        "(their flag, date or status is unknown).",
    )
    excluded_by_work: dict[str, int] = Field(
        default_factory=dict,
        description="Per work flag set to exclude: works left out because another record of "
        "the work carries the flag.",
    )
    next_cursor: str | None = Field(
        default=None,
        description="Pass it as cursor, with the same query and filters, for the next page; "
        "null on the last page.",
    )


class FetchedRecord(BaseModel):
    record: RecordView
    passages_total: int = Field(description="Passages the record version holds.")
    truncated: bool = Field(description="Only the first max_passages passages are shown.")


class FetchResult(BaseModel):
    demo_key: bool
    records: list[FetchedRecord]


class HandleQuery(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")  # a tool argument: see arguments.py

    handle: str = Field(
        description="A handle: scheme:id[@version]/path~check.",
        json_schema_extra={"maxLength": MAX_HANDLE_CHARS},  # checked by resolve(), exactly
    )
    quote: str | None = Field(
        default=None,
        description="Optional exact words to check.",
        json_schema_extra={"maxLength": MAX_QUOTE_CHARS},
    )


class ResolveResult(BaseModel):
    results: list[CitationResult]


class SnapshotIdentity(BaseModel):
    name: str
    snapshot_id: str
    file: str
    sha256: str
    created_at: str
    seal: str = Field(description="sealed (installation key) or demo (public key: proves nothing)")
    demo_key: bool = Field(description="Handles this server mints use the public demo key.")


class SnapshotInfo(BaseModel):
    identity: SnapshotIdentity
    parent: str | None
    mode: str
    records: int
    versions: int
    passages: int
    partial: bool
    failed_requests: int
    sources: dict[str, dict[str, Any]]


class Contract(BaseModel):
    contract_version: str
    grammar: str
    schemes: list[str]
    pinned_schemes: list[str]
    verdicts: list[dict[str, str]] = Field(description="The ladder: the first that applies wins.")
    flags: list[str]
    fail_on: list[str]
    default_fail_on: list[str]
    folding: str
    limits: dict[str, int]
    snapshot: SnapshotIdentity


def _flags_text(flags: dict[str, bool | None]) -> str:
    on = [name.replace("_", " ") for name, value in flags.items() if value]
    return f" [{', '.join(on)}]" if on else ""


def _passage_text(view: PassageView, number: int | None = None) -> str:
    head = f"{number}. " if number is not None else "- "
    handle = view.handle or (
        f"{view.record_id}@{view.version}/{view.path} (no handle scheme: cannot be cited)"
    )
    facts = (view.title, view.section, view.source, view.status)
    context = [one_line(c) for c in facts if c]
    if view.published:
        context.append(f"published {one_line(view.published)}")
    score = f" (score {view.score:.3f})" if view.score is not None else ""
    also = f"\n   also: {'; '.join(map(also_text, view.also))}" if view.also else ""
    return (
        f"{head}{one_line(handle)}{score}\n   {' — '.join(context)}{_flags_text(view.flags)}\n"
        f"   {one_line(view.text)}{also}"
    )


def _bounded_text(value: str, name: str, limit: int) -> None:
    if len(value) > limit:
        raise LimitExceeded(f"{name} is {len(value):,} characters long (limit {limit:,})")


def _bounded_count(values: Sequence[object], name: str, limit: int) -> None:
    if not values:
        raise InputError(f"{name} is empty; give at least one")
    if len(values) > limit:
        raise LimitExceeded(f"{name} has {len(values):,} items (limit {limit:,})")


def search(
    served: Served,
    kind: str,
    query: str | None,
    *,
    limit: int = 10,
    sources: Sequence[str] = (),
    retracted: str = "include",
    expression_of_concern: str = "include",
    preprint: str = "include",
    published_from: str | None = None,
    published_to: str | None = None,
    statuses: Sequence[str] = (),
    cursor: str | None = None,
    **more_filters: Any,
) -> Outcome:
    """BM25 over the passages of one kind of source (``SEARCHES``), filtered
    (:mod:`pipeline.snapshot.filters`; ``more_filters`` are :func:`make_filters`' other
    arguments: designs, open_access, phases, has_results, condition, intervention, drug, the
    trial date ranges), one page at a time (:mod:`pipeline.serve.cursor`). Drug labels take no
    query when a ``drug`` is given: its labels newest first (:mod:`pipeline.snapshot.listing`)."""
    allowed = SEARCHES[kind]
    unknown = [s for s in sources if s not in allowed]
    if unknown:
        raise InputError(
            f"source {unknown[0]!r} is not searched here; expected one of {', '.join(allowed)}"
        )
    if not 1 <= limit <= MAX_RESULTS:
        raise InputError(f"limit must be between 1 and {MAX_RESULTS}, got {limit}")
    chosen = list(dict.fromkeys(sources)) or list(allowed)
    if kind != "drug_labels" or (query is not None and query.strip()):
        check_query(query or "")

    def page_of() -> tuple[SearchFilters, SearchKey, int, SearchPage]:
        with served.cursor() as con:
            filters = make_filters(
                sources=chosen,
                retracted=retracted,
                expression_of_concern=expression_of_concern,
                preprint=preprint,
                published_from=published_from,
                published_to=published_to,
                statuses=statuses,
                held_statuses=held_statuses(con) if statuses else (),
                **more_filters,
            )
            key = SearchKey(kind, query or "", filters.canonical(), served.trusted.sha256)
            offset = read_cursor(served.keyring, cursor, key) if cursor is not None else 0
            page = find_page(con, query, served.keyring, filters, limit=limit, offset=offset)
            return filters, key, offset, page

    filters, key, offset, page = page_of()
    listing = not (query and query.strip())
    if (
        not listing
        and not offset
        and served.ensure_search(query or "", limit, chosen, len(page.hits))
    ):
        filters, key, offset, page = page_of()  # --online harvested the query: a new snapshot
    hits = page.hits
    after = offset + len(hits)
    value = SearchResult(
        query=None if listing else query,
        sources=chosen,
        demo_key=served.keyring.demo,
        results=hits,
        filters=filters.canonical(),
        offset=offset,
        total=page.total,
        passages=page.passages,
        excluded_unknown=page.excluded_unknown,
        excluded_by_work=page.excluded_by_work,
        next_cursor=issue_cursor(served.keyring, key, after) if after < page.total else None,
    )
    drug = repr(one_line(filters.drug or ""))
    if not hits:
        text = (
            f"no label names {drug}"
            if listing
            else f"no passage of {', '.join(chosen)} matches {one_line(query or '')!r}"
        )
        if filters != SearchFilters(sources=tuple(chosen), drug=filters.drug if listing else None):
            text += " with these filters"
        if offset:
            text += f" beyond the first {offset}"
    else:
        shown = f"{offset + 1}-{after} of {page.total}"
        lines = [
            f"labels {shown} naming {drug}, newest first:"
            if listing
            else f"works {shown} for {one_line(query or '')!r} ({', '.join(chosen)}):"
        ]
        lines += [_passage_text(hit, n) for n, hit in enumerate(hits, start=offset + 1)]
        text = "\n".join(lines)
    notes = undecided_lines(page.excluded_unknown) + work_lines(page.excluded_by_work)
    text += "".join(f"\n{line}" for line in notes)
    if value.next_cursor:
        text += f"\nmore results: call again with the same arguments and cursor={value.next_cursor}"
    return Outcome(value, text + _demo_note(served))


def _demo_note(served: Served) -> str:
    return "\nnote: handles minted with the public demo key" if served.keyring.demo else ""


def fetch(served: Served, record_ids: Sequence[str], *, max_passages: int = 50) -> Outcome:
    """Every passage (up to ``max_passages``) of the current version of each record."""
    _bounded_count(record_ids, "record_ids", MAX_RECORDS)
    if not 1 <= max_passages <= MAX_PASSAGES:
        raise InputError(f"max_passages must be between 1 and {MAX_PASSAGES}, got {max_passages}")
    for rid in record_ids:
        _bounded_text(rid, "a record id", MAX_ID_CHARS)
    served.ensure_records(record_ids)
    fetched: list[FetchedRecord] = []
    with served.cursor() as con:
        for rid in dict.fromkeys(record_ids):
            view = record_passages(con, rid, served.keyring)
            total = len(view.passages)
            shown = replace(view, passages=view.passages[:max_passages])
            fetched.append(
                FetchedRecord(record=shown, passages_total=total, truncated=total > max_passages)
            )
    lines: list[str] = []
    for item in fetched:
        view = item.record
        lines.append(
            f"{view.record_id} @{view.version}: {one_line(view.title or '')} "
            f"(source {view.source}; {item.passages_total} passages"
            + (f", first {len(view.passages)} shown" if item.truncated else "")
            + f"){_flags_text(view.flags)}"
        )
        if view.withdrawn:
            lines.append(f"  withdrawn upstream since {view.withdrawn_since}")
        lines += [_passage_text(p) for p in view.passages]
    value = FetchResult(demo_key=served.keyring.demo, records=fetched)
    return Outcome(value, "\n".join(lines) + _demo_note(served))


def resolve(served: Served, queries: Sequence[HandleQuery]) -> Outcome:
    """Each handle judged by the audit engine: verdict, passage as issued and now, flags."""
    _bounded_count(queries, "handles", MAX_HANDLES)
    for query in queries:
        _bounded_text(query.handle, "a handle", MAX_HANDLE_CHARS)
        if query.quote is not None:
            _bounded_text(query.quote, "a quote", MAX_QUOTE_CHARS)
    citations = [CitationInput.from_text(q.handle.strip(), q.quote) for q in queries]
    with served.corpus() as corpus:
        results = judge_citations(citations, corpus, served.keyring)
    lines = []
    for result in results:
        detail = f": {one_line(result.detail)}" if result.detail else ""
        flags = f" [{', '.join(f.name for f in result.flags)}]" if result.flags else ""
        lines.append(f"{one_line(result.handle)} → {result.verdict}{detail}{flags}")
        if result.passage is not None:
            lines.append(f"   as issued: {one_line(result.passage.text)}")
        if result.current_passage is not None:
            lines.append(f"   now: {one_line(result.current_passage.text)}")
    return Outcome(ResolveResult(results=results), "\n".join(lines))


def audit(
    served: Served,
    *,
    answer: str | None = None,
    claims: str | Mapping[str, Any] | Sequence[Any] | None = None,
    fail_on: Sequence[str] = (),
    now: datetime | None = None,
) -> Outcome:
    """Audit one answer (Markdown/plain text) or one claims document (JSON text, or the
    object a client sent, written back as JSON so the claims parser and its limits decide)."""
    if (answer is None) == (claims is None):
        raise InputError("give exactly one of answer (text) or claims (JSON)")
    policy = fail_on_items(fail_on)
    if answer is not None:
        parsed = parse_answer(answer)
    else:
        data = claims if isinstance(claims, str) else json.dumps(claims, ensure_ascii=False)
        parsed = parse_claims(data)
    with served.corpus() as corpus, closing(corpus.reference_resolver()) as resolver:
        report = audit_answer(
            parsed,
            corpus,
            served.keyring,
            fail_on=[*DEFAULT_FAIL_ON, *policy],
            source_label="mcp",
            now=now,
            text=answer,
            references=resolver,
        )
    return Outcome(report, render_text(report))


def support(
    served: Served, claim: str, handle_texts: Sequence[str], *, judge: Judge | None = None
) -> Outcome:
    """Each handle audited by the engine, then the claim judged against the passage as issued
    of each ok one (the default, deterministic judge unless ``judge`` is given; the server
    never calls an LLM on a client's behalf)."""
    chosen = judge if judge is not None else judge_by_name(DEFAULT_JUDGE, {})
    with served.corpus() as corpus:
        check = check_support(claim, handle_texts, corpus, served.keyring, chosen)
    return Outcome(check, render_support_check(check))


def identity(served: Served) -> SnapshotIdentity:
    trusted = served.trusted
    manifest = trusted.manifest
    return SnapshotIdentity(
        name=manifest.name,
        snapshot_id=manifest.snapshot_id,
        file=trusted.path.name,
        sha256=trusted.sha256,
        created_at=manifest.created_at,
        seal=trusted.seal,
        demo_key=served.keyring.demo,
    )


def _identity_text(ident: SnapshotIdentity) -> str:
    seal = "sealed with the PUBLIC demo key (proves nothing)" if ident.seal == "demo" else "sealed"
    return (
        f"snapshot {ident.name} {ident.snapshot_id} ({ident.file}, sha256 {ident.sha256[:16]}…, "
        f"created {ident.created_at}; {seal})"
    )


def info(served: Served) -> Outcome:
    """What the served snapshot holds (its manifest, without any local path)."""
    served.trusted.still_unchanged(**SERVED_CHANGE)
    manifest = served.trusted.manifest
    ident = identity(served)
    value = SnapshotInfo(
        identity=ident,
        parent=manifest.parent.snapshot_id if manifest.parent else None,
        mode=manifest.mode,
        records=manifest.records,
        versions=manifest.versions,
        passages=manifest.passages,
        partial=manifest.partial,
        failed_requests=len(manifest.failed_requests),
        sources={name: s.model_dump() for name, s in manifest.sources.items()},
    )
    lines = [
        _identity_text(ident),
        f"{manifest.records} records, {manifest.versions} versions, {manifest.passages} passages"
        + ("; PARTIAL: some requests failed" if manifest.partial else ""),
    ]
    lines += [f"  {name}: {s.status}, {s.records} records" for name, s in manifest.sources.items()]
    return Outcome(value, "\n".join(lines))


def limits() -> dict[str, int]:
    """Every limit a tool enforces, from the constants that enforce it."""
    from pipeline.serve.reaudit import MAX_REPORT_CHARS  # reaudit imports this module
    from pipeline.serve.references import MAX_CHECK_CHARS  # and so does references

    return {
        "query_chars": MAX_QUERY_CHARS,
        "search_results": MAX_RESULTS,
        "fetch_records": MAX_RECORDS,
        "fetch_passages_per_record": MAX_PASSAGES,
        "resolve_handles": MAX_HANDLES,
        "handle_chars": MAX_HANDLE_CHARS,
        "quote_chars": MAX_QUOTE_CHARS,
        "answer_chars": MAX_ANSWER_CHARS,
        "claims_chars": MAX_CLAIMS_BYTES,
        "citations_per_sentence": MAX_CITATIONS_PER_SENTENCE,
        "support_claim_chars": MAX_CLAIM_CHARS,
        "support_handles": MAX_SUPPORT_HANDLES,
        "support_handle_chars": MAX_SUPPORT_HANDLE_CHARS,
        "report_chars": MAX_REPORT_CHARS,
        "check_chars": MAX_CHECK_CHARS,
        "cursor_chars": MAX_CURSOR_CHARS,
    }


def contract(served: Served) -> Outcome:
    """The citation contract this server checks against, and the snapshot's identity."""
    served.trusted.still_unchanged(**SERVED_CHANGE)
    ident = identity(served)
    value = Contract(
        contract_version=CONTRACT_VERSION,
        grammar=doc_block(
            handles.__doc__,
            "Grammar (every handle has exactly one spelling; nothing is case-folded)::",
        ),
        schemes=list(handles.SCHEMES),
        pinned_schemes=sorted(handles.PINNED_SCHEMES),
        verdicts=[{"verdict": v, "meaning": VERDICT_MEANINGS[v]} for v in VERDICTS],
        flags=list(FLAG_NAMES),
        fail_on=list(FAIL_ON_ITEMS),
        default_fail_on=list(DEFAULT_FAIL_ON),
        folding=folding_steps(folding.__doc__),
        limits=limits(),
        snapshot=ident,
    )
    lines = [
        f"citeseal contract {CONTRACT_VERSION}: cite a passage by its handle, optionally with "
        'an exact quote: [HANDLE "words"]. Copy handles exactly; never invent or edit one.',
        "grammar:",
        value.grammar,
        "verdicts (first that applies wins): "
        + "; ".join(f"{v['verdict']} = {v['meaning']}" for v in value.verdicts),
        f"flags on ok citations: {', '.join(value.flags)}",
        "quotes match after folding (typography, whitespace, invisible characters only):",
        value.folding,
        "limits: " + ", ".join(f"{k} {v:,}" for k, v in value.limits.items()),
        _identity_text(ident),
    ]
    return Outcome(value, "\n".join(lines))
