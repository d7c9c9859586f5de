"""Crossref's replay shape (``PLUGIN.replay`` of :mod:`pipeline.sources.crossref`): how
``citeseal replay import`` places a recorded ``updates:`` list and how ``--replay`` answers
a batch of them by meaning (:mod:`pipeline.replay_match`, docs/sources.md).

* A by-id request: ``api.crossref.org/works`` (or ``/v1/works``) with ``filter=updates:D1,
  updates:D2…``, an optional ``rows``, an optional ``cursor=*`` (a later page is no by-id
  request), nothing else.
* Its parts: the list of notices that update one DOI. Only a wrapper can give one (the
  request names the DOI; a raw list does not say which record its notices update), and a
  list that holds fewer items than its ``total-results`` is not the whole answer: it is not
  placed, and its DOIs are not recorded absent.
* Its answer: one ``work-list`` of the notices of the DOIs asked, a notice updating two of
  them listed once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pipeline.sources.base import (
    Asked,
    Part,
    ReplayKind,
    ReplayShape,
    Split,
    page_size,
    replay_ids,
)

_DOI = re.compile(r"10\.\d{4,9}/[^\s,]+")


def _normal_doi(raw: str) -> str | None:
    value = raw.strip().lower()
    return value if _DOI.fullmatch(value) else None


def _unique_items(items: Iterable[Any]) -> list[Any]:
    """Crossref notices without repeats (a notice updating two DOIs asked is listed once)."""
    seen: set[str] = set()
    out: list[Any] = []
    for item in items:
        key = str(item.get("DOI", "")).lower() if isinstance(item, dict) else ""
        if key and key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out


def _answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    items = _unique_items(v for p in held for v in json.loads(p.fragment))
    data = {
        "status": "ok",
        "message-type": "work-list",
        "message-version": "1.0.0",
        "message": {
            "facets": {},
            "total-results": len(items),
            "items": items,
            "items-per-page": asked.size or 20,
            "query": {"start-index": 0, "search-terms": None},
        },
    }
    return 200, "application/json", json.dumps(data, ensure_ascii=False)


UPDATES = ReplayKind("crossref-updates", "DOI", "doi", _normal_doi, _answer)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if path not in ("/works", "/v1/works"):
        return None
    rows = params.pop("rows", None)
    if params.pop("cursor", "*") != "*":
        return None  # a page past the first
    if params.keys() != {"filter"} or (rows is not None and page_size(rows) is None):
        return None
    terms = params["filter"].split(",")
    if not all(t.startswith("updates:") for t in terms):
        return None
    ids = replay_ids(UPDATES, [t.removeprefix("updates:") for t in terms])
    return Asked(UPDATES.name, ids, size=page_size(rows)) if ids else None


def _updated(item: Any) -> set[str]:
    """The DOIs a Crossref notice updates (its ``update-to`` entries), lower case."""
    entries = item.get("update-to") if isinstance(item, dict) else None
    if not isinstance(entries, list):
        return set()
    return {str(e.get("DOI", "")).lower() for e in entries if isinstance(e, dict)}


def _split(value: Any, url: str | None, asked: Asked | None) -> Split:
    if asked is None or asked.kind != UPDATES.name:
        if url is None:
            return Split(
                reason="a raw Crossref body: only a wrapper whose request names the DOI (an "
                "updates: filter) says which record its notices update"
            )
        return Split()  # another request: kept for its exact request
    message = value.get("message") if isinstance(value, dict) else None
    items = message.get("items", []) if isinstance(message, dict) else []
    total = message.get("total-results") if isinstance(message, dict) else None
    if not isinstance(items, list) or (isinstance(total, int) and total > len(items)):
        return Split(
            reason=f"a Crossref answer that lists {len(items) if isinstance(items, list) else 0}"
            f" of {total} notices: not the whole answer"
        )
    split = Split()
    for doi in asked.ids:
        mine = items if len(asked.ids) == 1 else [i for i in items if doi in _updated(i)]
        fragment = json.dumps(mine, ensure_ascii=False)
        split.parts.append(Part(UPDATES.name, doi, held=True, fragment=fragment))
    return split


REPLAY = ReplayShape(
    kinds=(UPDATES,),
    asked=_asked,
    split=_split,
    json_keys=("message-type", "message"),
)
