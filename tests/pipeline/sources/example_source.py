"""A complete source for a toy JSON API, "Notes" (docs/sources.md, "Writing a source").

GET {BASE}/search?q=…&page=N answers {"results": [note, …], "next": N+1 or null};
GET {BASE}/notes?ids=N1,N2 answers {"results": [note, …]}; a note is
{"id": "N1", "title": "…", "text": "…"}.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, Any

import httpx
from pydantic import Field

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import ParseResult, Passage, Record
from pipeline.sources.base import (
    Asked,
    ById,
    Part,
    Plugin,
    Rate,
    ReplayKind,
    ReplayShape,
    Request,
    Search,
    Shapes,
    Split,
    Step,
    Unit,
    replay_ids,
)
from pipeline.sources.paging import send, walk
from pipeline.sources.spec_types import Limit, Strict, id_list
from pipeline.xmlsafe import load_json

NAME = "notes"
BASE = "https://notes.example/api"
NOTE_ID = re.compile(r"^N[1-9][0-9]{0,8}$")
PER_REQUEST = 50  # note ids in one /notes request


# 1. A pure parser: a body in, records out; a body of the wrong shape is a ParseError.
def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    del url
    data = load_json(body, what="Notes JSON")
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise ParseError("expected a Notes answer with a 'results' list, got none")
    nxt = data.get("next")
    return ParseResult(
        source=NAME,
        records=[_record(item) for item in results],
        next=str(nxt) if isinstance(nxt, int) else None,
    )


def _record(item: Any) -> Record:
    ident = item.get("id") if isinstance(item, dict) else None
    if not isinstance(ident, str) or not NOTE_ID.match(ident):
        raise ParseError(f"expected a note with an id N + digits, got {item!r:.60}")
    title, text = str(item.get("title") or ""), str(item.get("text") or "")
    passages = [Passage(path="title", section="Title", text=title)]
    if text:
        passages.append(Passage(path="abstract.1", section="Text", text=text))
    return Record(record_id=f"note:{ident}", source=NAME, title=title, passages=passages)


# 2. Pure paging: a response in, the next request out (the harvest's one loop does the I/O).
class SearchPages:
    def __init__(self, query: str, limit: int) -> None:
        self.query, self.limit = query, limit
        self.records: list[Record] = []

    def first(self) -> Request:
        return Request(f"{BASE}/search", {"q": self.query, "page": 1})

    def step(self, response: httpx.Response) -> Step:
        result = parse(response.content)
        self.records.extend(result.records)
        if result.next is None or len(self.records) >= self.limit:
            return Step(None, result.refused)
        return Step(Request(f"{BASE}/search", {"q": self.query, "page": int(result.next)}))

    def result(self) -> list[Record]:
        return self.records[: self.limit]


def search(client: HttpClient, query: str, limit: int) -> list[Record]:
    return walk(client, NAME, SearchPages(query, limit))


# 3. A by-id request builder: the harvest judges every answer (missing, controls, refresh).
def fetch_notes(client: HttpClient, note_ids: list[str]) -> list[Record]:
    response = send(client, NAME, Request(f"{BASE}/notes", {"ids": ",".join(note_ids)}))
    return parse(response.content).records


# 4. The [notes] table of a corpus spec: the source owns its model.
class NotesQuery(Strict):
    query: str = Field(min_length=1)
    limit: Limit


class NotesSpec(Strict):
    queries: list[NotesQuery] = Field(default_factory=list)
    ids: Annotated[list[str], id_list(NOTE_ID, "a note id (N + digits)")] = Field(
        default_factory=list
    )


# 5. Optional: replay by meaning, so `citeseal replay import` places recorded Notes bodies
#    (one part per note) and `--replay` answers any /notes?ids=… request from those parts.
def _notes_answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    del asked
    body = json.dumps({"results": [json.loads(p.fragment) for p in held]})
    return 200, "application/json", body


NOTES_IDS = ReplayKind(
    "notes-ids",  # REPLAYDIR/units/notes-ids/<id>.json
    "note id",  # what its ids are called in messages
    "note",  # the scheme of the record a part's parse must give
    lambda raw: raw.strip() if NOTE_ID.match(raw.strip()) else None,
    _notes_answer,
)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if path != "/api/notes" or params.keys() != {"ids"}:
        return None  # another request: matched only by its exact key
    ids = replay_ids(NOTES_IDS, params["ids"].split(","))
    return Asked(NOTES_IDS.name, ids) if ids else None


def _split(value: Any, url: str | None, asked: Asked | None) -> Split:
    del url, asked
    results = value.get("results") if isinstance(value, dict) else None
    texts = [json.dumps(note) for note in results] if isinstance(results, list) else []
    # each note is checked alone by the parser, in the envelope of a Notes answer
    return Split(units=[Unit(NOTES_IDS.name, t, f'{{"results": [{t}]}}') for t in texts])


REPLAY = ReplayShape(kinds=(NOTES_IDS,), asked=_asked, split=_split, json_keys=("results",))


# 6. The source itself.
PLUGIN = Plugin(
    name=NAME,
    schemes=("note",),
    base_url=BASE,
    parse_body=parse,
    rate=Rate("notes.example", 5.0),
    options=NotesSpec,
    shapes=Shapes(hosts=(("notes.example", "/api/"),), json=(("results",),)),
    by_id={"note": ById("notes", PER_REQUEST, fetch_notes)},
    replay=REPLAY,
    table_searches=lambda spec: [
        Search(f"search {q.query!r}", q.query, lambda client, q=q: search(client, q.query, q.limit))
        for q in spec.queries
    ],
    table_ids=lambda spec: {"note": spec.ids},
)
