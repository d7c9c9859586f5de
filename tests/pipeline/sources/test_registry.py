"""The registry of sources is the one place that names them: the spec, pacing, base URLs,
the audit's scheme table and ``citeseal parse`` agree with it; paging is one loop."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from audit.handles import SCHEMES
from audit.verdicts import SCHEME_SOURCE
from pipeline.harvest_spec import CorpusSpec
from pipeline.http import HttpClient
from pipeline.pacing import HOST_RATES
from pipeline.records import SOURCES, Refusal
from pipeline.settings import BASE_URL_VARIABLES, BASE_URLS, Settings
from pipeline.sources import BUILTIN_NAMES, names, register, registered, source, sources
from pipeline.sources.base import Request, Step
from pipeline.sources.paging import walk
from tests.conftest import ROOT
from tests.pipeline.sources import example_source
from tests.pipeline.sources.helpers import UNPACED


def test_the_registry_lists_the_builtin_sources_in_their_order() -> None:
    assert names() == BUILTIN_NAMES == SOURCES
    assert [s.name for s in sources()] == list(BUILTIN_NAMES)


def test_the_spec_has_a_table_for_every_source_with_options_and_no_other() -> None:
    tables = {f for f in CorpusSpec.model_fields if f not in {"name", "description", "replay"}}
    assert tables == {s.name for s in sources() if s.options is not None}
    for plugin in sources():
        if plugin.options is not None:
            field = CorpusSpec.model_fields[plugin.name]
            assert field.annotation == plugin.options | None


def test_the_audits_scheme_table_agrees_with_the_sources_schemes() -> None:
    assert set(SCHEME_SOURCE) == set(SCHEMES)
    for scheme, name in SCHEME_SOURCE.items():
        assert scheme in source(name).schemes


def test_pacing_and_base_urls_come_from_each_source() -> None:
    for plugin in sources():
        # a source without a rate asks no host: the user's own files (local) only
        assert (plugin.rate is None) == (plugin.base_url == "") == (plugin.name == "local")
        if plugin.rate is None:
            assert plugin.name not in BASE_URLS and plugin.name not in BASE_URL_VARIABLES
            continue
        assert HOST_RATES[plugin.rate.host] == plugin.rate.per_second
        assert BASE_URLS[plugin.name] == plugin.base_url
        assert BASE_URL_VARIABLES[plugin.name] == f"CITESEAL_{plugin.name.upper()}_URL"


def test_a_registered_source_gets_its_rate_base_url_and_variable() -> None:
    with registered(example_source.PLUGIN):
        assert HOST_RATES["notes.example"] == 5.0
        assert BASE_URLS["notes"] == "https://notes.example/api"
        assert BASE_URL_VARIABLES["notes"] == "CITESEAL_NOTES_URL"
    assert "notes" not in BASE_URLS


def test_a_source_name_is_registered_once() -> None:
    with pytest.raises(ValueError) as info:
        register(source("pubmed"))
    assert str(info.value) == "a source named 'pubmed' is registered already"


def test_importing_the_registry_or_reading_the_settings_loads_no_parser() -> None:
    code = (
        "import sys; import pipeline.sources; from pipeline.settings import Settings; "
        "Settings.from_env({'CITESEAL_DATA_DIR': '/nonexistent'}); "
        "print(sorted(m for m in sys.modules if m.startswith('pipeline.sources.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


class _Counting:
    """A pager over ?page=N that stops after page 3, refusing one record on page 2."""

    def __init__(self) -> None:
        self.pages: list[int] = []

    def first(self) -> Request:
        return Request("https://api.crossref.org/works", {"page": 1})

    def step(self, response: httpx.Response) -> Step:
        page = int(response.request.url.params["page"])
        self.pages.append(page)
        refused = [Refusal(reason="bad id", value=f"p{page}")] if page == 2 else []
        nxt = Request("https://api.crossref.org/works", {"page": page + 1}) if page < 3 else None
        return Step(nxt, refused)

    def result(self) -> list[int]:
        return self.pages


def test_the_one_loop_asks_each_next_request_and_reports_refusals_per_answer() -> None:
    reported: list[tuple[str, list[str]]] = []
    client = HttpClient(
        Settings(),
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={})),
        rates=UNPACED,
        on_refusal=lambda s, refusals: reported.append((s, [r.value for r in refusals])),
    )
    with client:
        assert walk(client, "crossref", _Counting()) == [1, 2, 3]
    assert reported == [("crossref", ["p2"])]
