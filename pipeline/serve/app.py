"""The audit view as an MCP App: ``ui://citeseal/audit-view`` (``text/html;profile=mcp-app``).

How it is linked (MCP Apps, extension ``io.modelcontextprotocol/ui``): the ``audit_answer``
tool carries ``_meta.ui.resourceUri = "ui://citeseal/audit-view"`` (:data:`TOOL_META`); a host
that supports Apps reads that resource, renders it in a sandboxed iframe and passes it each
``audit_answer`` result (``ui/notifications/tool-result``).

What it shows is **the report page the site renders**: for a client that negotiated Apps
(:func:`mcp.server.apps.client_supports_apps`), the result's ``_meta["citeseal/audit-view"]``
carries ``html``, the standalone report page of :func:`audit.render_html.render_report_html`
(the site's ``report.html.j2``, Jinja autoescape, its CSP allowing only our stylesheet by
hash). The view itself (``site/templates/app.html.j2`` on the site's ``base.html.j2``, plus
``site/static/audit-view.js``) is only the bridge: it does the ``ui/initialize`` handshake,
parses the page inert (``DOMParser`` runs no script) and moves its ``<main>`` in. Its CSP is
the site's with exactly two inline hashes: that script and the site stylesheet; no network,
no other script, no inline handler. A client without Apps gets no ``html`` (nothing is
rendered for it) and reads the report in ``content`` and ``structuredContent`` as before.

The page's passages follow the publishing policy's default (:mod:`audit.publish`, ``policy``):
in full where the cited record's licence allows republishing it, else an excerpt with a link
to the source — a view can be shared like any page; the full text stays in the result's
``structuredContent``, for the client's model.

The view holds no state and no answer: nothing one client audited can reach another.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from audit.render_html import (
    CSP_TAIL,
    STATIC_DIR,
    Chrome,
    TemplatesMissingError,
    make_environment,
    render_report_html,
    stylesheet_text,
)
from audit.report import Report

if TYPE_CHECKING:
    from mcp.server.apps import Apps
    from mcp.types import CallToolResult

VIEW_URI = "ui://citeseal/audit-view"
VIEW_META_KEY = "citeseal/audit-view"
SCRIPT = "audit-view.js"
TOOL_META: dict[str, Any] = {"ui": {"resourceUri": VIEW_URI}}
"""What ``audit_answer`` carries in its ``_meta`` (the way MCP Apps link a tool to a view)."""


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def view_csp(script: str, css: str) -> str:
    """The site's policy, allowing exactly this inline script and stylesheet by hash."""
    return (
        f"default-src 'none'; script-src 'sha256-{_sha256(script)}'; "
        f"style-src 'sha256-{_sha256(css)}'; {CSP_TAIL}"
    )


def _inline(text: str, name: str) -> Markup:
    if "</" in text:
        raise TemplatesMissingError(f"{STATIC_DIR / name} cannot be inlined (contains '</')")
    return Markup(text)  # noqa: S704 - our own static file, never user text


@cache
def view_html() -> str:
    """The App's HTML: the site's frame, its stylesheet, the bridge script (built once)."""
    try:
        script = (STATIC_DIR / SCRIPT).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplatesMissingError(f"audit view script not found: {STATIC_DIR / SCRIPT}") from None
    css = stylesheet_text()
    chrome = Chrome(
        title="citeseal audit view", csp=view_csp(script, css), inline_css=_inline(css, "site.css")
    )
    template = make_environment().get_template("app.html.j2")
    return template.render(page=chrome, script=_inline(script, SCRIPT))


def apps_extension() -> Apps:
    """The MCP Apps extension with the audit view registered (pass it to ``MCPServer``)."""
    from mcp.server.apps import Apps

    apps = Apps()
    apps.add_html_resource(
        VIEW_URI,
        view_html(),
        name="audit-view",
        title="citeseal audit report",
        description="The report page of an audit_answer result, as the audit site renders it.",
    )
    return apps


def with_view(result: CallToolResult, wanted: bool) -> CallToolResult:
    """``result`` with the rendered report page in ``_meta`` when the client shows Apps."""
    if not wanted or result.is_error or not isinstance(result.structured_content, dict):
        return result
    report = Report.model_validate(result.structured_content)
    meta = {**(result.meta or {}), VIEW_META_KEY: {"html": render_report_html(report)}}
    return result.model_copy(update={"meta": meta})
