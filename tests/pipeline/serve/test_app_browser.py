"""The audit view (MCP App) in headless Chromium, inside a minimal fake host: the bridge does
the ``ui/initialize`` handshake, shows the report page of the ``audit_answer`` result, runs no
script of the answer's, and its CSP reports no violation (a violation is a console error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from audit.handles import mint, parse_locator
from audit.render_html import render_report_html
from pipeline.serve import service
from pipeline.serve.app import VIEW_META_KEY, view_html
from pipeline.serve.service import Served
from tests.pipeline.serve.conftest import DEMO
from tests.pipeline.site.test_browser import ARGS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM}"),
]

HOST = """
([view, result]) => {
  window.seen = [];
  const frame = document.createElement("iframe");
  frame.sandbox = "allow-scripts";
  frame.srcdoc = view;
  window.addEventListener("message", (event) => {
    const m = event.data;
    window.seen.push(m.method || "response");
    const reply = (message) => frame.contentWindow.postMessage(message, "*");
    if (m.method === "ui/initialize") {
      reply({jsonrpc: "2.0", id: m.id, result: {protocolVersion: m.params.protocolVersion,
             hostInfo: {name: "fake-host", version: "1"}, hostCapabilities: {}, hostContext: {}}});
    } else if (m.method === "ui/notifications/initialized") {
      reply({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result});
    }
  });
  document.body.append(frame);
}
"""
HOSTILE = (
    "<script>window.parent.postMessage('pwned', '*')</script> Zentravir "
    "<img src=x onerror=\"window.parent.postMessage('pwned', '*')\"> was studied [{handle}].\n"
)


def test_the_audit_view_shows_the_report_page_and_runs_no_answer_script(
    served: Served, tmp_path: Path
) -> None:
    handle = mint(DEMO, parse_locator("pmid:99000001/abstract.1"))
    report = service.audit(served, answer=HOSTILE.format(handle=handle)).value
    result = {
        "content": [{"type": "text", "text": "report"}],
        "_meta": {VIEW_META_KEY: {"html": render_report_html(report)}},  # type: ignore[arg-type]
    }
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.set_content("<!DOCTYPE html><title>host</title><body></body>")
            page.evaluate(HOST, [view_html(), result])
            page.wait_for_function("() => window.frames.length === 1")
            frame = page.frames[1]
            frame.wait_for_selector("h1")
            heading = frame.inner_text("h1")
            body = frame.inner_text("main")
            scripts = frame.evaluate("() => document.scripts.length")
            images = frame.evaluate("() => document.images.length")
            page.wait_for_timeout(200)  # let a stray handler post, if one could run
            seen = page.evaluate("() => window.seen")
        finally:
            browser.close()
    assert heading == "Audit of mcp"
    assert "<script>window.parent.postMessage('pwned', '*')</script>" in body  # shown as text
    assert (scripts, images) == (0, 0)  # the bridge replaced itself; the answer's markup is text
    assert seen == ["ui/initialize", "ui/notifications/initialized"]  # never "pwned"
    assert errors == []
