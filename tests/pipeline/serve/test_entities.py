"""PubTator3 entities in fetch_passages (pipeline/serve/entities.py)."""

from __future__ import annotations

import duckdb
import pytest
from mcp import Client

from pipeline.serve.entities import Entity, passage_entities
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from pipeline.snapshot.search import PassageView
from tests.pipeline.serve.test_server import ok

pytestmark = pytest.mark.anyio


def _passage(path: str, text: str) -> PassageView:
    return PassageView("pmid:99000001", "1", path, None, text, None)


def test_entities_are_placed_by_their_span_and_misfits_are_counted_never_shown() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE annotations (record_id VARCHAR, version VARCHAR, path VARCHAR, "
        'start INTEGER, "end" INTEGER, text VARCHAR, type VARCHAR, identifier VARCHAR)'
    )
    rows = [
        ("abstract.1", 0, 7, "Aspirin", "Chemical", "MESH:D001241"),
        ("abstract.1", 20, 28, "headache", "Disease", None),
        ("abstract.1", 30, 90, "beyond", "Disease", "MESH:D1"),  # past the end: unplaced
        ("abstract.1", 8, 14, "cures", "Disease", "MESH:D2"),  # not the text at 8-14
        ("abstract.9", 0, 3, "not", "Gene", "1"),  # a passage not shown: not read
    ]
    for path, start, end, text, kind, ident in rows:
        con.execute(
            "INSERT INTO annotations VALUES ('pmid:99000001', '1', ?, ?, ?, ?, ?, ?)",
            [path, start, end, text, kind, ident],
        )
    shown = [_passage("abstract.1", "Aspirin eased a bad headache."), _passage("title", "T")]
    found, unplaced = passage_entities(con, "pmid:99000001", "1", shown)
    assert [(f.path, f.entities) for f in found] == [
        (
            "abstract.1",
            [
                Entity(type="Chemical", identifier="MESH:D001241", text="Aspirin", start=0, end=7),
                Entity(type="Disease", identifier=None, text="headache", start=20, end=28),
            ],
        ),
        ("title", []),
    ]
    assert unplaced == 2


async def test_fetch_passages_gives_each_passages_entities_only_when_asked(served: Served) -> None:
    with served.cursor() as con:
        row = con.execute(
            "SELECT a.record_id FROM annotations a JOIN record_state s ON s.record_id = "
            "a.record_id AND s.current_version = a.version ORDER BY 1 LIMIT 1"
        ).fetchone()
    assert row is not None  # the demo snapshot holds PubTator3 annotations
    args = {"record_ids": [row[0]], "max_passages": 200}
    async with Client(build_server(served), raise_exceptions=True) as client:
        plain, _ = await ok(client, "fetch_passages", args)
        value, text = await ok(client, "fetch_passages", {**args, "include_entities": True})
    assert (plain["records"][0]["entities"], plain["records"][0]["entities_unplaced"]) == (
        None,
        None,
    )
    record = value["records"][0]
    texts = {p["path"]: p["text"] for p in record["record"]["passages"]}
    assert [e["path"] for e in record["entities"]] == list(texts)  # every shown passage, in order
    placed = [(e["path"], x) for e in record["entities"] for x in e["entities"]]
    assert placed and record["entities_unplaced"] == 0
    for path, entity in placed:
        assert texts[path][entity["start"] : entity["end"]] == entity["text"]
        assert set(entity) == {"type", "identifier", "text", "start", "end"}
    assert "   entities: " in text
    assert set(record["record"]["flags"]) == {"retracted", "expression_of_concern", "preprint"}
