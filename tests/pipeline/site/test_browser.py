"""The built site in headless Chromium: every page renders with its landmarks, every link
resolves, nothing is requested from outside the site, the console stays clean (a CSP
violation is a console error), text contrast is at least 4.5:1, and it works from file://
and from a sub-path over HTTP (as on GitHub Pages)."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urldefrag

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from pipeline.site.build import build_site
from tests.conftest import TRUST
from tests.pipeline.site.factory import make_inputs

# Debian's chromium; CITESEAL_CHROMIUM points elsewhere (CI runners ship Google Chrome).
CHROMIUM = Path(
    os.environ.get("CITESEAL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"no Chromium at {CHROMIUM} (make test installs Debian's chromium when it can; "
        "CITESEAL_CHROMIUM names another binary)",
    ),
]

CONTRAST_JS = """
() => {
  const lum = (rgb) => {
    const [r, g, b] = rgb.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const parse = (c) => c.match(/[\\d.]+/g).map(Number);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const worst = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest('.skip-link') || el.offsetParent === null) continue;
    const fg = lum(parse(getComputedStyle(el).color).slice(0, 3));
    const bg = lum(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) worst.push(el.tagName + '.' + el.className + ' ' + ratio.toFixed(2));
  }
  return worst;
}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    reports, snapshots = make_inputs(root / "in")
    out = root / "serve" / "citeseal"  # a sub-path, as on GitHub Pages
    build_site(reports, snapshots, out, env={"SOURCE_DATE_EPOCH": "1750000000"}, trust=TRUST)
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site.parent))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/{site.name}/"
    httpd.shutdown()
    httpd.server_close()


def crawl(browser: Browser, start: str, allowed_prefix: str) -> dict[str, list[str]]:
    """Visit every page reachable from ``start``; returns problems per page (empty = fine)."""
    context = browser.new_context()
    tab = Tab(context, allowed_prefix)
    problems: dict[str, list[str]] = {}
    todo, seen = [start], set()
    wanted: dict[str, set[str]] = {}
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        if url.endswith(".json"):  # a report's data, not a page: fetched, not rendered
            problems[url] = _json_problems(url)
            continue
        found, links = tab.visit(url)
        problems[url] = found
        for href in links:
            target, fragment = urldefrag(href)
            if not target.startswith(allowed_prefix):
                found.append(f"links outside the site: {href}")
                continue
            todo.append(target)
            if fragment:
                wanted.setdefault(target, set()).add(fragment)
    for target, ids in sorted(wanted.items()):
        if not problems.get(target):
            problems[target].extend(f"no element #{i}" for i in sorted(ids - tab.ids(target)))
    context.close()
    return problems


def _json_problems(url: str) -> list[str]:
    """A linked JSON file loads and parses (read outside the browser, which would ask the
    server for a favicon it does not have)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (our own site)
            json.loads(answer.read())
    except (OSError, ValueError) as error:
        return [f"cannot load as JSON: {error}"]
    return []


class Tab:
    """One browser tab that records console errors, failed and outside requests per visit."""

    def __init__(self, context: BrowserContext, allowed_prefix: str) -> None:
        self.context = context
        self.allowed = allowed_prefix
        self.found: list[str] = []
        self.page = self._open()

    def _open(self) -> Page:
        page = self.context.new_page()
        found = self.found
        page.on(
            "console",
            lambda m: (
                found.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        page.on("pageerror", lambda e: found.append(f"page error: {e}"))
        # ERR_ABORTED is a request of the previous page cancelled by the next navigation (a
        # race under load), not a broken resource: a missing file fails with its own error
        page.on(
            "requestfailed",
            lambda r: (
                found.append(f"request failed: {r.url} ({r.failure})")
                if "ERR_ABORTED" not in (r.failure or "")
                else None
            ),
        )
        page.on(
            "request",
            lambda r: (
                found.append(f"outside request: {r.url}")
                if not r.url.startswith(self.allowed)
                else None
            ),
        )
        return page

    def visit(self, url: str) -> tuple[list[str], list[str]]:
        """Load one page: its problems and its links."""
        self.found.clear()
        try:
            response = self.page.goto(url)
        except PlaywrightError as error:
            self.page.close()  # a failed navigation can leave the tab busy: use a fresh one
            self.page = self._open()
            return [f"cannot load: {error.message.splitlines()[0]}"], []
        page, found = self.page, list(self.found)
        if response is not None and not response.ok:
            found.append(f"status {response.status}")
        if not page.title().endswith("· citeseal"):
            found.append(f"title {page.title()!r}")
        if page.locator("main#main").count() != 1 or page.locator("h1").count() != 1:
            found.append("no main landmark or no single h1")
        if page.locator("header nav[aria-label=Site]").count() != 1:
            found.append("no site navigation")
        # an excerpt's link to its record's source (rel="external") leaves the site on purpose;
        # test_build.py checks where those point
        links = 'a[href]:not([rel="external"])'
        return found, page.eval_on_selector_all(links, "els => els.map(e => e.href)")

    def ids(self, url: str) -> set[str]:
        self.page.goto(url)
        return set(self.page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))


def test_every_page_renders_and_links_resolve_from_file_urls(browser: Browser, site: Path) -> None:
    problems = crawl(browser, (site / "index.html").as_uri(), site.as_uri())
    assert len(problems) >= 20
    assert {url: p for url, p in problems.items() if p} == {}


def test_the_site_works_from_a_sub_path_over_http(browser: Browser, server: str) -> None:
    problems = crawl(browser, server + "index.html", server)
    assert len(problems) >= 20
    assert {url: p for url, p in problems.items() if p} == {}


def test_styles_load_under_the_policy_and_text_contrast_is_sufficient(
    browser: Browser,
    server: str,
) -> None:
    page = browser.new_page()
    for path in (
        "index.html",
        "reports/answer-1.html",
        "snapshots/demo-20250602.html",
        "reaudit.html",
    ):
        page.goto(server + path)
        assert (
            page.evaluate(
                "() => getComputedStyle(document.querySelector('.site-header')).borderBottomStyle"
            )
            == "solid"
        ), "the stylesheet did not load"
        assert page.evaluate(CONTRAST_JS) == [], path
    page.close()


def test_keyboard_users_reach_the_skip_link_first_and_see_focus(
    browser: Browser, site: Path
) -> None:
    page = browser.new_page()
    page.goto((site / "reports" / "answer-1.html").as_uri())
    page.keyboard.press("Tab")
    focused = page.evaluate("() => document.activeElement.className")
    assert focused == "skip-link"
    assert page.evaluate("() => document.activeElement.getBoundingClientRect().left >= 0")
    page.keyboard.press("Tab")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    page.close()


def test_print_hides_navigation(browser: Browser, site: Path) -> None:
    page = browser.new_page()
    page.goto((site / "reports" / "answer-1.html").as_uri())
    page.emulate_media(media="print")
    assert (
        page.evaluate("() => getComputedStyle(document.querySelector('header nav')).display")
        == "none"
    )
    page.close()
