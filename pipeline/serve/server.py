"""The MCP surface of ``citeseal serve`` (mcp 2.3, ``mcp.server.mcpserver.MCPServer``).

One tool per :mod:`pipeline.serve.service` function. Every tool:

* takes typed arguments whose bounds are in the input schema (``maxLength``, ``maxItems``,
  ``minimum``/``maximum``; the search tools' types are :mod:`pipeline.serve.params`) and are
  checked again by the service with an exact message; the
  types are checked strictly (``true`` is no integer, ``"5"`` no number) and an argument of
  the wrong type or name is one line naming it (:mod:`pipeline.serve.arguments`);
* is annotated read-only, idempotent and closed-world (nothing is fetched, nothing written);
* returns structured content (its output schema is the service's model) AND a text block a
  model can read on its own (some clients read only ``content``);
* fails as an ``isError`` result with a stable code, a retryable flag and a hint in its
  structured content and the error's one line as its text (:mod:`pipeline.serve.calls`: a
  :class:`~audit.errors.CiteSealError` by the one table, anything else ``internal`` with a
  reference and nothing of its text, its traceback logged on stderr), never a silent pass;
* runs under a per-call deadline: a call that has not ended by then is ``deadline_exceeded``,
  and what it returns later is discarded.

Tools are sync functions: the SDK runs each in a worker thread, so calls run concurrently;
each call reads through its own cursor (:class:`~pipeline.serve.served.Served`).

The SDK is imported inside :func:`build_server` only, so that importing this module (as
``citeseal --help`` and the no-``fcntl`` import check do) does not load it: on POSIX the SDK
imports ``fcntl`` at import time. That is also why this module does not use postponed
annotations: the tools' annotations are evaluated where they are defined, inside
:func:`build_server`, where the SDK's names are bound.
"""

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from audit import __version__
from audit.citations import MAX_ANSWER_CHARS, MAX_QUOTE_CHARS
from audit.claims import MAX_CLAIMS_BYTES
from audit.errors import CiteSealError
from audit.references.check import CheckReport
from audit.report import FAIL_ON_ITEMS, Report
from audit.support.run import (
    MAX_CLAIM_CHARS,
    MAX_SUPPORT_HANDLE_CHARS,
    MAX_SUPPORT_HANDLES,
    SupportCheck,
)
from audit.terminal import one_line
from pipeline.serve import calls, describe, references, service
from pipeline.serve.describe import INSTRUCTIONS, Contract, SnapshotInfo
from pipeline.serve.params import (
    CompletedFrom,
    CompletedTo,
    Concern,
    Condition,
    Cursor,
    DateFrom,
    DateTo,
    Designs,
    Drug,
    HasResults,
    Intervention,
    LabelQuery,
    LabelSources,
    Limit,
    LiteratureSources,
    OpenAccess,
    Phases,
    Preprint,
    Query,
    Retracted,
    StartedFrom,
    StartedTo,
    Statuses,
    TrialSources,
    schema,
)
from pipeline.serve.served import Served
from pipeline.serve.service import (
    MAX_HANDLE_CHARS,
    MAX_HANDLES,
    MAX_ID_CHARS,
    MAX_PASSAGES,
    MAX_RECORDS,
    FetchResult,
    HandleQuery,
    Outcome,
    ResolveResult,
    SearchResult,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

log = logging.getLogger("citeseal.serve")


def tool_message(error: CiteSealError) -> str:
    """The error as the model reads it: one line, then the advice when there is one."""
    hint = f"; hint: {one_line(error.advice)}" if error.advice else ""
    return f"{one_line(error.message)}{hint}"


def _result(call: Callable[[], Outcome]) -> "CallToolResult":
    """Run one service call; its project error reaches :meth:`Server.call_tool` (inside
    :func:`build_server`), which gives it its code (:mod:`pipeline.serve.calls`)."""
    from mcp.types import CallToolResult, TextContent

    outcome = call()
    return CallToolResult(
        content=[TextContent(type="text", text=outcome.text)],
        structured_content=outcome.value.model_dump(mode="json"),
    )


def _log_late(tool: str, started: float, late: "asyncio.Future[Any]") -> None:
    """The log line of a call that ended after its deadline (its result was not delivered)."""
    failure = None if late.cancelled() or late.exception() else late.result()[1]
    calls.log_call(tool, started, failure, late=True)


def error_result(tool: str, failure: calls.Failure) -> "CallToolResult":
    """The ``isError`` result of a failed call: its line as text, its code as structure."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=failure.text(tool))],
        structured_content=failure.structured(),
        is_error=True,
    )


def build_server(
    served: Served, *, deadline: float = calls.DEFAULT_CALL_DEADLINE, flat_schemas: bool = True
) -> "MCPServer":
    """The MCP server over ``served`` (its tools; transports are the caller's), each call
    bounded by ``deadline`` seconds; its tools' output schemas published flattened
    (:mod:`pipeline.serve.schema_shape`; ``flat_schemas=False``: as the SDK derives them, for
    the bench's figure before)."""
    from mcp.server.apps import client_supports_apps
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.types import CallToolResult, ToolAnnotations
    from pydantic import ValidationError

    from pipeline.serve import app, schema_shape, surface
    from pipeline.serve.arguments import argument_problem, make_strict

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """The SDK's call under this call's deadline, every failure an ``isError`` result
            with its stable code, one log line per call (:mod:`pipeline.serve.calls`)."""
            started = time.monotonic()
            deadline, token = limit.start()
            try:  # the task copies the context: the deadline reaches the tool's thread
                task = asyncio.ensure_future(self._answer(name, arguments, context))
            finally:
                calls.CallDeadline.stop(token)
            try:
                await asyncio.wait({task}, timeout=max(0.0, deadline - time.monotonic()))
            except BaseException:  # the client cancelled the request
                task.cancel()
                raise
            if not task.done() or time.monotonic() > deadline:
                task.add_done_callback(lambda late: _log_late(name, started, late))
                failure = calls.deadline_exceeded(limit.seconds)
                calls.log_call(name, started, failure)
                return error_result(name, failure)
            result, failure = task.result()
            calls.log_call(name, started, failure)
            return result

        async def _answer(
            self, name: str, arguments: dict[str, Any], context: Any
        ) -> tuple[Any, calls.Failure | None]:
            try:
                return await super().call_tool(name, arguments, context), None
            except UnexpectedToolError as error:
                cause = error.__cause__
                if isinstance(cause, CiteSealError):
                    failure = calls.failure_of(cause)
                else:
                    reference = calls.new_reference()
                    log.error(
                        "internal error %s in tool %s", reference, name, exc_info=cause or error
                    )
                    failure = calls.internal(reference)
            except ToolError as error:  # arguments the (strict) model refused, an unknown tool
                cause = error.__cause__
                if isinstance(cause, ValidationError):
                    failure = calls.invalid_input(argument_problem(name, cause))
                else:
                    failure = calls.invalid_input(str(error))
            return error_result(name, failure), failure

    limit = calls.CallDeadline(deadline)
    read_only = ToolAnnotations(  # open world with --online: searches and fetches may go live
        read_only_hint=True, idempotent_hint=True, open_world_hint=served.online
    )
    mcp = Server(
        name="citeseal",
        title="citeseal evidence snapshot",
        version=__version__,
        instructions=INSTRUCTIONS,
        extensions=[app.apps_extension()],  # the audit view (ui://citeseal/audit-view)
    )

    @mcp.tool(annotations=read_only)
    def search_literature(
        query: Query,
        limit: Limit = 10,
        sources: LiteratureSources = [],  # noqa: B006
        retracted: Retracted = "include",
        expression_of_concern: Concern = "include",
        preprint: Preprint = "include",
        published_from: DateFrom = None,
        published_to: DateTo = None,
        design: Designs = [],  # noqa: B006
        open_access: OpenAccess = "include",
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the snapshot's papers (PubMed, Europe PMC, PubTator3, Crossref) by BM25.

        One result per work (a paper's PubMed, Europe PMC, Crossref and preprint records):
        its best passage with its handle (cite it exactly as given), the work's other records
        in also. Flags (retracted, expression_of_concern: set when any record of the work has
        them; preprint) are shown on each result. Filters: retracted,
        expression_of_concern, preprint (include/exclude/only; peer-reviewed versions only:
        preprint=exclude), publication date range, study design, open access. More pages: pass
        next_cursor back as cursor."""
        return _result(
            lambda: service.search(
                served,
                "literature",
                query,
                limit=limit,
                sources=sources,
                retracted=retracted,
                expression_of_concern=expression_of_concern,
                preprint=preprint,
                published_from=published_from,
                published_to=published_to,
                designs=design,
                open_access=open_access,
                cursor=cursor,
            )
        )

    @mcp.tool(annotations=read_only)
    def search_trials(
        query: Query,
        limit: Limit = 10,
        sources: TrialSources = [],  # noqa: B006
        status: Statuses = [],  # noqa: B006
        published_from: DateFrom = None,
        published_to: DateTo = None,
        condition: Condition = None,
        intervention: Intervention = None,
        phase: Phases = [],  # noqa: B006
        has_results: HasResults = None,
        started_from: StartedFrom = None,
        started_to: StartedTo = None,
        completed_from: CompletedFrom = None,
        completed_to: CompletedTo = None,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the snapshot's ClinicalTrials.gov records by BM25; each passage has its
        handle (trial handles pin the registry version they were issued from). Filters:
        condition and intervention (fielded), overall status, phase, posted results,
        first-posted, start and completion date ranges. More pages: pass next_cursor back as
        cursor."""
        return _result(
            lambda: service.search(
                served,
                "trials",
                query,
                limit=limit,
                sources=sources,
                statuses=status,
                published_from=published_from,
                published_to=published_to,
                condition=condition,
                intervention=intervention,
                phases=phase,
                has_results=has_results,
                started_from=started_from,
                started_to=started_to,
                completed_from=completed_from,
                completed_to=completed_to,
                cursor=cursor,
            )
        )

    @mcp.tool(annotations=read_only)
    def search_drug_labels(
        query: LabelQuery = None,
        limit: Limit = 10,
        sources: LabelSources = [],  # noqa: B006
        published_from: DateFrom = None,
        published_to: DateTo = None,
        drug: Drug = None,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the snapshot's openFDA drug labels by BM25; each passage has its handle
        (label handles pin the set id and label version they were issued from). Filters: the
        label version's effective-date range; drug (brand, generic or substance name). With
        drug and no query: every label naming that drug, newest first (effective date), each
        as its first passage. More pages: pass next_cursor back as cursor."""
        return _result(
            lambda: service.search(
                served,
                "drug_labels",
                query,
                limit=limit,
                sources=sources,
                published_from=published_from,
                published_to=published_to,
                drug=drug,
                cursor=cursor,
            )
        )

    @mcp.tool(annotations=read_only)
    def search_documents(
        query: Query,
        limit: Limit = 10,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the snapshot's own documents (the [local] folder it was built from: PDF
        pages, Markdown sections, text paragraphs) by BM25; each passage has its handle
        (a local: handle pins the file's digest; cite it exactly as given). More pages: pass
        next_cursor back as cursor."""
        return _result(
            lambda: service.search(served, "documents", query, limit=limit, cursor=cursor)
        )

    @mcp.tool(annotations=read_only)
    def fetch_passages(
        record_ids: Annotated[
            list[str],
            Field(
                description=f"Record ids such as pmid:99000001 or nct:NCT99000001 "
                f"(1-{MAX_RECORDS}).",
                **schema(
                    minItems=1,
                    maxItems=MAX_RECORDS,
                    items={"type": "string", "maxLength": MAX_ID_CHARS},
                ),
            ),
        ],
        max_passages: Annotated[
            int,
            Field(
                description=f"At most this many passages per record (1-{MAX_PASSAGES}).",
                **schema(minimum=1, maximum=MAX_PASSAGES),
            ),
        ] = 50,
        include_entities: Annotated[
            bool,
            Field(
                description="Also give each shown passage's PubTator3 entities: type, "
                "normalised identifier, span offsets in the passage text (default false)."
            ),
        ] = False,
    ) -> Annotated[CallToolResult, FetchResult]:
        """Every passage of the current version of each record, each with a freshly minted
        handle, plus the record's title, status, flags (retracted, expression_of_concern,
        preprint) and relations; with include_entities, each passage's PubTator3 entities.
        Handles do not expire: they stay verifiable against this snapshot."""
        return _result(
            lambda: service.fetch(
                served,
                record_ids,
                max_passages=max_passages,
                include_entities=include_entities,
            )
        )

    @mcp.tool(annotations=read_only)
    def resolve_handles(
        handles: Annotated[
            list[HandleQuery],
            Field(
                description=f"Handles (1-{MAX_HANDLES}), each with an optional quote "
                f"(handle at most {MAX_HANDLE_CHARS}, quote at most {MAX_QUOTE_CHARS} "
                "characters).",
                **schema(minItems=1, maxItems=MAX_HANDLES),
            ),
        ],
    ) -> Annotated[CallToolResult, ResolveResult]:
        """Judge handles with the audit engine: verdict (malformed, forged, unavailable,
        withdrawn, quote_mismatch, ok), the passage as issued and as it is now, and flags."""
        return _result(lambda: service.resolve(served, handles))

    @mcp.tool(annotations=read_only, meta=app.TOOL_META)
    def audit_answer(
        ctx: Context,
        answer: Annotated[
            str,
            Field(
                description="The answer (Markdown or plain text) citing [HANDLE] or "
                f'[HANDLE "quote"] (at most {MAX_ANSWER_CHARS:,} characters).',
                **schema(maxLength=MAX_ANSWER_CHARS),
            ),
        ] = "",
        claims: Annotated[
            dict[str, Any] | list[Any] | None,
            Field(
                description='Instead of answer: structured claims, {"claims": [{"sentence": '
                '..., "citations": [{"handle": ..., "quote": ...}]}]} (docs/audit.md; at most '
                f"{MAX_CLAIMS_BYTES:,} characters as JSON).",
            ),
        ] = None,
        fail_on: Annotated[
            list[str],
            Field(
                description="Also fail on these (malformed and forged always fail).",
                **schema(
                    items={"type": "string", "enum": list(FAIL_ON_ITEMS)},
                    maxItems=len(FAIL_ON_ITEMS),
                ),
            ),
        ] = [],  # noqa: B006
    ) -> Annotated[CallToolResult, Report]:
        """Audit an answer's citations against this snapshot and return the report (overall
        pass/warn/fail, a verdict per citation, uncited sentences). Give answer or claims."""
        result = _result(
            lambda: service.audit(served, answer=answer or None, claims=claims, fail_on=fail_on)
        )
        return app.with_view(result, client_supports_apps(ctx))

    @mcp.tool(annotations=read_only)
    def check_references(
        text: Annotated[
            str,
            Field(
                description="A document or an answer whose ordinary references (DOIs, PMIDs, "
                "PMCIDs, arXiv ids, NCT numbers, ISBNs, reference-list entries) to check (at "
                f"most {references.MAX_CHECK_CHARS:,} characters).",
                **schema(minLength=1, maxLength=references.MAX_CHECK_CHARS),
            ),
        ],
        format: Annotated[
            str | None,
            Field(
                description="How to read text (default markdown).",
                **schema(enum=[*references.TEXT_FORMATS, None]),
            ),
        ] = None,
    ) -> Annotated[CallToolResult, CheckReport]:
        """Check every ordinary reference of a text against this snapshot, offline: per
        reference a tier (verified, mismatch with the field seen vs expected, hallucinated,
        needs_review, unresolved: the snapshot cannot say, never a guessed fabrication),
        retracted / expression-of-concern / preprint flags and a trace of every lookup. The
        same JSON as `citeseal check --format json`."""
        return _result(lambda: references.check_references(served, text, format))

    @mcp.tool(annotations=read_only)
    def check_support(
        claim: Annotated[
            str,
            Field(
                description=f"The sentence to check, as written (at most {MAX_CLAIM_CHARS:,} "
                "characters).",
                **schema(minLength=1, maxLength=MAX_CLAIM_CHARS),
            ),
        ],
        handles: Annotated[
            list[str],
            Field(
                description=f"The handles citing it (1-{MAX_SUPPORT_HANDLES}, each at most "
                f"{MAX_SUPPORT_HANDLE_CHARS} characters).",
                **schema(
                    minItems=1,
                    maxItems=MAX_SUPPORT_HANDLES,
                    items={"type": "string", "maxLength": MAX_SUPPORT_HANDLE_CHARS},
                ),
            ),
        ],
    ) -> Annotated[CallToolResult, SupportCheck]:
        """Does each cited passage support the claim? Each handle is first judged by the audit
        engine (a forged or unavailable handle is reported, never judged); the claim is then
        judged against the passage as issued: supported, contradicted, not_mentioned, or
        abstain (not sure), with a one-sentence reason and the evidence span."""
        return _result(lambda: service.support(served, claim, handles))

    @mcp.tool(annotations=read_only)
    def describe_contract() -> Annotated[CallToolResult, Contract]:
        """The citation contract: handle grammar, verdict ladder, flags, quote folding, the
        server's limits and the snapshot's identity. Read it before citing."""
        return _result(lambda: describe.contract(served))

    @mcp.tool(annotations=read_only)
    def snapshot_info() -> Annotated[CallToolResult, SnapshotInfo]:
        """What the served snapshot is and holds: identity, seal, counts, per-source status."""
        return _result(lambda: describe.info(served))

    surface.register(mcp, served)  # reaudit_report, cite_by_handle, evidence:// resources
    make_strict(mcp)  # every tool's arguments: strict types, no unknown names
    if flat_schemas:
        schema_shape.flatten_tool_schemas(mcp)  # the same language, cheaper for clients to check
    return mcp
