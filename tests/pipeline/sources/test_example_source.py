"""The worked example of docs/sources.md ("Writing a source") is a real source: registered,
its [notes] table is part of the corpus spec, and it harvests through the harvest's one loop
under the same rules as the built-in sources. The page's code block is this file's example."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest

from pipeline.errors import HarvestError, ParseError, SpecError
from pipeline.harvest import Harvester
from pipeline.harvest_spec import parse_spec
from pipeline.http import HttpClient
from pipeline.records import Record
from pipeline.settings import Settings
from pipeline.snapshot.progress import NullProgress
from pipeline.sources import names, registered
from tests.conftest import ROOT
from tests.pipeline.sources import example_source

DOCS = ROOT / "docs" / "sources.md"
SPEC = """\
name = "n"
[[notes.queries]]
query = "zentravir"
limit = 3
[notes]
ids = ["N7", "N9"]
"""
NOTES = {f"N{i}": {"id": f"N{i}", "title": f"Note {i}", "text": f"Text {i}."} for i in range(1, 9)}


class Sink:
    def __init__(self) -> None:
        self.delivered: list[str] = []
        self.failures: list[tuple[str, str, str]] = []

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        self.delivered += [f"{source} {r.record_id}" for r in records]

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.failures.append((source, step, error.message))

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        del source, step, count, detail


class Lineage:
    """A lineage holding note:N9 (gone upstream) and note:N8."""

    def live(self, record_ids: Collection[str]) -> set[str]:
        return {r for r in record_ids if r in {"note:N8", "note:N9"}}

    def emptied(self, records: Sequence[Record]) -> dict[str, str]:
        del records
        return {}

    def controls(self, source: str, scheme: str, exclude: Collection[str], limit: int) -> list[str]:
        del source, scheme, limit
        return [r for r in ["note:N8"] if r not in exclude]

    def carrying_pmcids(self, source: str, pmcids: Collection[str]) -> set[str]:
        del source, pmcids
        return set()


def notes_api(asked: list[str]) -> httpx.MockTransport:
    """The toy API: two pages of search results, and notes by id (N9 is gone)."""

    def handler(request: httpx.Request) -> httpx.Response:
        query = {k: v[0] for k, v in parse_qs(request.url.query.decode()).items()}
        asked.append(f"{request.url.path} {query}")
        if request.url.path == "/api/search":
            page = int(query["page"])
            found = [NOTES["N1"], NOTES["N2"]] if page == 1 else [NOTES["N3"]]
            return httpx.Response(200, json={"results": found, "next": 2 if page == 1 else None})
        wanted = query["ids"].split(",")
        return httpx.Response(200, json={"results": [NOTES[i] for i in wanted if i in NOTES]})

    return httpx.MockTransport(handler)


@pytest.fixture
def notes() -> Iterator[None]:
    with registered(example_source.PLUGIN):
        yield


def test_a_registered_source_gets_its_spec_table(notes: None) -> None:
    spec = parse_spec(SPEC, Path("n.toml"))
    options = spec.options("notes")
    assert isinstance(options, example_source.NotesSpec)
    assert options.ids == ["N7", "N9"]
    assert spec.sources() == ["notes"]
    assert "notes" in names()


def test_its_table_is_checked_like_every_other(notes: None) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec('name = "n"\n[notes]\nids = ["X1"]\n', Path("n.toml"))
    assert str(info.value) == "n.toml:3: [notes].ids: 'X1' is not a note id (N + digits)"


def test_an_unregistered_source_has_no_table() -> None:
    with pytest.raises(SpecError) as info:
        parse_spec('name = "n"\n[notes]\nids = ["N1"]\n', Path("n.toml"))
    assert str(info.value) == (
        "n.toml:2: [notes]: unknown section; expected one of arxiv, clinicaltrials, crossref, "
        "europepmc, local, openalex, openfda, pubmed"
    )


def test_it_harvests_through_the_one_loop_and_the_shared_by_id_rules(notes: None) -> None:
    asked: list[str] = []
    sink = Sink()
    with HttpClient(Settings(), transport=notes_api(asked), rates={"notes.example": 0.0}) as client:
        harvester = Harvester(
            parse_spec(SPEC, Path("n.toml")), client, sink, NullProgress(), lineage=Lineage()
        )
        outcome = harvester.run()
    assert sink.delivered == ["notes note:N1", "notes note:N2", "notes note:N3", "notes note:N7"]
    assert asked == [
        "/api/search {'q': 'zentravir', 'page': '1'}",
        "/api/search {'q': 'zentravir', 'page': '2'}",
        "/api/notes {'ids': 'N7,N9'}",
    ]
    assert outcome.missing == {"note:N9"}  # the same answer held N7: positive evidence
    assert sink.failures == []


def test_the_docs_worked_example_is_this_source() -> None:
    page = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    example = Path(example_source.__file__).read_text(encoding="utf-8")
    assert example in blocks
