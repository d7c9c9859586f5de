"""The server's core: bounded inputs in, a JSON-ready result and a text block out.

Each function takes the :class:`Served` snapshot (trusted before the server started) and the
tool's plain arguments, checks every bound itself (so a model gets one exact, actionable
sentence, not a validator dump), and calls the code the CLI uses: ``search_page`` and
``record_passages`` (:mod:`pipeline.snapshot.search`), ``parse_answer`` / ``parse_claims`` and
the audit engine. Errors are :class:`~audit.errors.CiteSealError` subclasses only; the MCP
layer turns them into ``isError`` results.

The snapshot every function reads is :class:`~pipeline.serve.served.Served` (its
connections, the ``--online`` hooks); what the server says about itself (the contract, the
snapshot's info) is :mod:`pipeline.serve.describe`.

Limits (also advertised in the tools' input schemas) are the ``MAX_*`` constants below and
the parsers' own (:data:`audit.citations.MAX_ANSWER_CHARS`, :data:`audit.claims.MAX_CLAIMS_BYTES`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from audit.citations import MAX_QUOTE_CHARS, parse_answer
from audit.claims import parse_claims
from audit.engine import CitationInput, audit_answer, judge_citations
from audit.errors import InputError, LimitExceeded
from audit.render_text import render_support_check, render_text
from audit.report import DEFAULT_FAIL_ON, CitationResult, fail_on_items
from audit.support.judges import DEFAULT_JUDGE, judge_by_name
from audit.support.model import Judge
from audit.support.run import check_support
from audit.terminal import one_line
from pipeline.serve.cursor import SearchKey, issue_cursor, read_cursor
from pipeline.serve.entities import PassageEntities, entities_line, passage_entities
from pipeline.serve.served import Served
from pipeline.snapshot.filters import SearchFilters, make_filters, undecided_lines, work_lines
from pipeline.snapshot.listing import find_page
from pipeline.snapshot.search import (
    PassageView,
    RecordView,
    SearchPage,
    also_text,
    check_query,
    held_statuses,
    record_passages,
)

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
    entities: list[PassageEntities] | None = Field(
        default=None,
        description="With include_entities: per shown passage, its PubTator3 entities (type, "
        "normalised identifier, span offsets in the passage text); null otherwise.",
    )
    entities_unplaced: int | None = Field(
        default=None,
        description="With include_entities: entities of the shown passages whose span does not "
        "fit the passage text (left out, never guessed).",
    )


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


def fetch(
    served: Served,
    record_ids: Sequence[str],
    *,
    max_passages: int = 50,
    include_entities: bool = False,
) -> Outcome:
    """Every passage (up to ``max_passages``) of the current version of each record, with
    the record's flags and, when asked, its PubTator3 entities (:mod:`pipeline.serve.entities`)."""
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
            found, unplaced = (
                passage_entities(con, rid, view.version, shown.passages)
                if include_entities
                else (None, None)
            )
            fetched.append(
                FetchedRecord(
                    record=shown,
                    passages_total=total,
                    truncated=total > max_passages,
                    entities=found,
                    entities_unplaced=unplaced,
                )
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
        entities = {e.path: e.entities for e in item.entities or ()}
        for passage in view.passages:
            lines.append(_passage_text(passage))
            if entities.get(passage.path):
                lines.append(f"   entities: {one_line(entities_line(entities[passage.path]))}")
        if item.entities_unplaced:
            lines.append(
                f"  {item.entities_unplaced} entit{'y' if item.entities_unplaced == 1 else 'ies'} "
                "left out: the span does not fit the passage text"
            )
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
