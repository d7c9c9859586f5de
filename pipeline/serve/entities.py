"""PubTator3 entities of the passages ``fetch_passages`` returns (``include_entities: true``).

Rules:

* An entity is one row of the snapshot's ``annotations`` table for the passage's record
  version and path: its ``type`` (Gene, Chemical, Disease…), its normalised ``identifier``
  (``MESH:D001241``, an NCBI Gene id; ``null`` when PubTator3 gave none) and its span,
  ``start``/``end`` character offsets in the passage's text, so ``text[start:end]`` is the
  mention (:class:`audit.support.model.Entity` reads them the same way).
* Fail closed: a row whose span does not lie inside the passage, or whose mention text is not
  the text at its span, is never shown as if it were placed: it is counted in
  ``entities_unplaced`` of its record. Only rows of the passages shown are read: those of
  passages past ``max_passages`` are neither shown nor counted.
* Entities are the snapshot's, read offline; a snapshot built without PubTator3 has none, and
  every shown passage then has an empty list.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
from pydantic import BaseModel, Field

from pipeline.snapshot.search import PassageView

_SQL = (
    'SELECT path, start, "end", text, type, identifier FROM annotations '
    'WHERE record_id = ? AND version = ? ORDER BY path, start, "end", identifier NULLS LAST'
)


class Entity(BaseModel):
    type: str | None = Field(description="PubTator3's entity type (Gene, Chemical, Disease…).")
    identifier: str | None = Field(
        description="The normalised identifier (e.g. MESH:D001241); null when none was given."
    )
    text: str = Field(description="The mention: the passage's text[start:end].")
    start: int = Field(description="Offset of the mention's first character in the passage.")
    end: int = Field(description="Offset just past the mention's last character.")


class PassageEntities(BaseModel):
    path: str = Field(description="The passage's path (as in its handle).")
    entities: list[Entity]


def passage_entities(
    con: duckdb.DuckDBPyConnection, record_id: str, version: str, shown: Sequence[PassageView]
) -> tuple[list[PassageEntities], int]:
    """Per shown passage (in order), its placed entities; and how many rows of shown passages
    could not be placed (module docstring)."""
    texts = {p.path: p.text for p in shown}
    placed: dict[str, list[Entity]] = {p.path: [] for p in shown}
    unplaced = 0
    for path, start, end, mention, kind, identifier in con.execute(
        _SQL, [record_id, version]
    ).fetchall():
        text = texts.get(path)
        if text is None:
            continue  # a passage not shown (or none at all): not this page's
        inside = isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)
        if not inside or (mention is not None and text[start:end] != mention):
            unplaced += 1
            continue
        placed[path].append(
            Entity(type=kind, identifier=identifier, text=text[start:end], start=start, end=end)
        )
    return [PassageEntities(path=path, entities=found) for path, found in placed.items()], unplaced


def entities_line(found: Sequence[Entity]) -> str:
    """The text block's line for one passage's entities."""
    return "; ".join(
        f"{e.type or 'entity'} {e.text!r} ({e.identifier or 'no identifier'}) {e.start}-{e.end}"
        for e in found
    )
