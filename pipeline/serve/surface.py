"""The rest of the MCP surface: ``reaudit_report``, the prompt, the ``evidence://`` resources.

:func:`register` adds them to the server :func:`pipeline.serve.server.build_server` made (the
audit view, an MCP App, is an extension given to the server's constructor:
:mod:`pipeline.serve.app`). The logic lives in :mod:`pipeline.serve.reaudit`,
:mod:`pipeline.serve.prompt` and :mod:`pipeline.serve.resources`; this module is the MCP
wiring only, and imports the SDK inside :func:`register` (see :mod:`pipeline.serve.server`).

Errors: the tool's failures are ``isError`` results with their code, like every tool's
(:mod:`pipeline.serve.calls`);
a resource's :class:`~audit.errors.InputError` (a bad or unknown id, a malformed handle) is
resource-not-found (JSON-RPC -32602) and any other project error -32603, both carrying the
error's one-line message and advice.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from audit.errors import CiteSealError, InputError
from pipeline.serve import prompt, reaudit, resources
from pipeline.serve.reaudit import MAX_REPORT_CHARS, ReauditResult
from pipeline.serve.served import Served
from pipeline.serve.server import _result, tool_message

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def _read(call: Callable[[], str]) -> str:
    """Run one resource read; a project error becomes the MCP resource error the spec names."""
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    try:
        return call()
    except InputError as error:
        raise ResourceNotFoundError(tool_message(error)) from None
    except CiteSealError as error:
        raise ResourceError(tool_message(error)) from None


def _exact(template: str, ctx: Any, decoded: str) -> str:
    """The template's value as the client's URI writes it (:func:`resources.exact_value`:
    the SDK hands resources its %XX-decoded value, and a ``local:`` id is itself %XX)."""
    params = ctx.request_context.params or {}
    return resources.exact_value(template, params.get("uri"), decoded)


def prompt_arguments_error(
    name: str, declared: set[str], required: set[str], given: set[str]
) -> str | None:
    """Why ``given`` argument names do not fit prompt ``name`` (taking ``declared``, of which
    ``required``), or None when they fit: one line naming each unexpected or missing one."""
    unexpected, missing = sorted(given - declared), sorted(required - given)
    if unexpected:
        takes = f"takes {', '.join(sorted(declared))}" if declared else "takes no arguments"
        return f"prompt {name} {takes}; unexpected argument {', '.join(unexpected)}"
    if missing:
        return f"prompt {name} needs argument {', '.join(missing)}"
    return None


def _strict_prompt(fn: Callable[..., str], *, title: str, description: str) -> Any:
    """The SDK's prompt for ``fn``, whose argument names are checked before it runs: a wrong
    name is an invalid-params protocol error (JSON-RPC -32602) naming it. The SDK's own
    check is missing-required only; an unexpected name would reach ``fn`` as a TypeError and
    come back as an opaque internal error with a traceback on stderr."""
    from mcp import MCPError
    from mcp.server.mcpserver.prompts import Prompt
    from mcp.types import INVALID_PARAMS

    class StrictPrompt(Prompt):
        async def render(self, arguments: dict[str, Any] | None, context: Any) -> Any:
            declared = {argument.name for argument in self.arguments or []}
            required = {argument.name for argument in self.arguments or [] if argument.required}
            given = set(arguments or {})
            problem = prompt_arguments_error(self.name, declared, required, given)
            if problem is not None:
                raise MCPError(INVALID_PARAMS, problem)
            return await super().render(arguments, context)

    return StrictPrompt.from_function(fn, title=title, description=description)


def register(mcp: "MCPServer", served: Served) -> None:
    """Add ``reaudit_report``, ``cite_by_handle`` and the two resource templates to ``mcp``."""
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.resources import ResourceSecurity
    from mcp.types import CallToolResult, ToolAnnotations

    read_only = (
        ToolAnnotations(  # as server.py's: with --online the snapshot read may be a live child
            read_only_hint=True, idempotent_hint=True, open_world_hint=served.online
        )
    )

    @mcp.tool(annotations=read_only)
    def reaudit_report(
        report: Annotated[
            dict[str, Any] | str,
            Field(
                description="A published report: the JSON `citeseal audit --format json` and "
                "the audit site write, as an object or as JSON text (at most "
                f"{MAX_REPORT_CHARS:,} characters).",
                json_schema_extra={"maxLength": MAX_REPORT_CHARS},  # applies to the text form
            ),
        ],
    ) -> Annotated[CallToolResult, ReauditResult]:
        """Audit a published report again against this snapshot: every citation judged
        afresh, and what changed since publication (verdict before → now per citation)."""
        return _result(lambda: reaudit.reaudit_report(served, report))

    def cite_by_handle() -> str:
        try:
            return prompt.cite_by_handle(served)
        except CiteSealError as error:
            from mcp import MCPError
            from mcp.types import INTERNAL_ERROR

            raise MCPError(INTERNAL_ERROR, tool_message(error)) from None

    mcp.add_prompt(
        _strict_prompt(
            cite_by_handle,
            title="Cite by handle",
            description="How to cite this snapshot's passages with handles and exact quotes, "
            "with one example minted live from a real passage.",
        )
    )

    security = ResourceSecurity()  # the SDK's default, kept on purpose: see resources.py

    @mcp.resource(
        resources.RECORD_TEMPLATE,
        name="record",
        title="Evidence record",
        description="One record's current version: metadata, status, flags, relations, "
        "versions and every passage with a freshly minted handle (JSON).",
        mime_type=resources.MIME_TYPE,
        security=security,
    )
    def record(record_id: str, ctx: Context) -> str:
        return _read(
            lambda: resources.record(served, _exact(resources.RECORD_TEMPLATE, ctx, record_id))
        )

    @mcp.resource(
        resources.PASSAGE_TEMPLATE,
        name="passage",
        title="Cited passage",
        description="The passage a handle names: verdict, flags, the text as issued and as it "
        "is now (JSON).",
        mime_type=resources.MIME_TYPE,
        security=security,
    )
    def passage(handle: str, ctx: Context) -> str:
        return _read(
            lambda: resources.passage(served, _exact(resources.PASSAGE_TEMPLATE, ctx, handle))
        )
