"""Replay import and replay by meaning read every source from the registry: a source of one's
own (the worked example of docs/sources.md) is imported from its raw bodies and replayed
without any replay module naming it; a raw body no source recognises is a listed failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli.replay_cmd import report_lines
from pipeline.errors import ReplayMissError
from pipeline.http import HttpClient
from pipeline.replay import ReplayTransport
from pipeline.replay_import import plan_import, write_import
from pipeline.replay_match import (
    CLINICALTRIALS_IDS,
    CROSSREF_UPDATES,
    EUROPEPMC_PPR,
    KINDS,
    OPENFDA_SETIDS,
    PUBMED_EFETCH,
    PUBTATOR3_EXPORT,
    Asked,
    asked_of,
)
from pipeline.replay_units import place
from pipeline.settings import Settings
from pipeline.sources import registered
from tests.cli import citeseal
from tests.conftest import ROOT
from tests.pipeline.sources import example_source

NOTES = {f"N{i}": {"id": f"N{i}", "title": f"Note {i}", "text": f"Text {i}."} for i in range(1, 4)}


def notes_body(*ids: str) -> str:
    return json.dumps({"results": [NOTES[i] for i in ids]})


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_the_builtin_kinds_are_read_from_the_sources_plug_ins() -> None:
    assert dict(KINDS) == {
        PUBMED_EFETCH: ("pubmed", "PMID"),
        EUROPEPMC_PPR: ("europepmc", "preprint"),
        PUBTATOR3_EXPORT: ("pubtator3", "PMID"),
        CROSSREF_UPDATES: ("crossref", "DOI"),
        CLINICALTRIALS_IDS: ("clinicaltrials", "NCT id"),
        OPENFDA_SETIDS: ("openfda", "set id"),
    }


def test_a_registered_source_adds_its_kind_and_request_grammar_only_while_registered() -> None:
    url = "https://notes.example/api/notes?ids=N2,N1,N2&tool=citeseal"
    assert asked_of("GET", url) is None
    with registered(example_source.PLUGIN):
        assert KINDS["notes-ids"] == ("notes", "note id")
        assert asked_of("GET", url) == Asked("notes-ids", ("N2", "N1"))
    assert "notes-ids" not in KINDS
    assert asked_of("GET", url) is None


def test_a_request_off_the_notes_grammar_is_no_by_id_request() -> None:
    with registered(example_source.PLUGIN):
        assert asked_of("GET", "https://notes.example/api/notes?ids=N2,x1") is None
        assert asked_of("GET", "https://notes.example/api/notes?ids=N2&page=2") is None
        assert asked_of("GET", "https://notes.example/api/notes?ids=N2&ids=N3") is None
        assert asked_of("POST", "https://notes.example/api/notes", "ids=N2") is None
        assert asked_of("GET", "https://notes.example/api/search?q=zentravir&page=1") is None


def test_a_source_of_ones_own_is_imported_from_raw_bodies_and_replayed_by_meaning(
    tmp_path: Path,
) -> None:
    recorded = write(
        tmp_path / "recorded", {"a.json": notes_body("N1", "N2"), "b.json": notes_body("N3")}
    )
    with registered(example_source.PLUGIN):
        plan = plan_import(recorded, Settings())
        assert (plan.not_placed, plan.notes) == ([], [])
        assert report_lines(plan, "recorded", "out") == [
            "read 2 file(s) from recorded; placed 2 (notes 2) into out",
            "  notes: 3 note id(s) held for by-id requests",
        ]
        out = tmp_path / "out"
        write_import(plan, out, read_from=recorded)
        assert sorted(p.name for p in (out / "units" / "notes-ids").iterdir()) == [
            "N1.json",
            "N2.json",
            "N3.json",
        ]
        with HttpClient(Settings(), transport=ReplayTransport([out])) as http:
            records = example_source.fetch_notes(http, ["N3", "N1"])  # one request, two files
            assert [r.record_id for r in records] == ["note:N3", "note:N1"]
            assert records == example_source.parse(notes_body("N3", "N1")).records
            with pytest.raises(ReplayMissError) as missed:
                example_source.fetch_notes(http, ["N1", "N9"])
    assert missed.value.message == (
        "out holds no recorded notes answer for 1 of the 2 note id(s) asked by "
        "GET https://notes.example/api/notes?ids=N1%2CN9: N9"
    )


def test_a_notes_body_its_parser_rejects_is_not_placed_and_says_why() -> None:
    bad = json.dumps({"results": [NOTES["N1"], {"id": "X1", "title": "?"}]})
    with registered(example_source.PLUGIN):
        placement = place(bad)
    assert [(p.kind, p.ident) for p in placement.parts] == []
    assert placement.reason == (
        "its body does not parse: expected a note with an id N + digits, got "
        "{'id': 'X1', 'title': '?'}"
    )


def test_raw_bodies_no_source_recognises_are_listed_and_the_import_exits_2(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "recorded",
        {"a.json": json.dumps({"entries": [NOTES["N1"]]}), "b.xml": "<notes><n id='N1'/></notes>"},
    )
    result = citeseal("replay", "import", "recorded", "--into", "out", cwd=tmp_path)
    assert (result.returncode, result.stdout.splitlines(), result.stderr) == (
        2,
        [
            "read 2 file(s) from recorded; placed 0",
            "not placed: a.json: a JSON body of no known source (keys: entries)",
            "not placed: b.xml: an XML body of no known source (<notes>)",
        ],
        "error: none of the 2 file(s) in recorded could be placed; nothing written\n",
    )
    assert not (tmp_path / "out").exists()


def test_a_raw_body_of_a_source_without_a_replay_shape_says_it_is_not_importable() -> None:
    feed = (ROOT / "tests" / "fixtures" / "arxiv" / "id-list.xml").read_text(encoding="utf-8")
    assert place(feed).reason == (
        "a raw arxiv body: arxiv has no replay shape, so only its recorded wrapper files are "
        "imported (kept for their exact request)"
    )
    wrapped = place(feed, url="https://export.arxiv.org/api/query?id_list=2101.00001")
    assert (wrapped.source, wrapped.parts, wrapped.reason) == ("arxiv", [], None)
    assert wrapped.exchange is not None and wrapped.exchange.body == feed


def test_a_partial_crossref_list_records_none_of_its_dois_absent() -> None:
    body = json.dumps(
        {
            "status": "ok",
            "message-type": "work-list",
            "message": {
                "total-results": 3,
                "items": [{"DOI": "10.5555/n1", "update-to": [{"DOI": "10.5555/a"}]}],
            },
        }
    )
    placement = place(body, url="https://api.crossref.org/works?filter=updates:10.5555/a")
    assert (placement.parts, placement.exchange) == ([], None)
    assert placement.reason == "a Crossref answer that lists 1 of 3 notices: not the whole answer"
