"""ClinicalTrials.gov's replay shape (``PLUGIN.replay`` of
:mod:`pipeline.sources.clinicaltrials`): how ``citeseal replay import`` places recorded
studies and how ``--replay`` answers a by-id request by meaning (:mod:`pipeline.replay_match`,
docs/sources.md).

* A by-id request: ``clinicaltrials.gov/api/v2/studies`` with ``filter.ids=A,B``, an optional
  ``fields``, ``format=json`` (optional), ``pageSize`` ≥ the ids asked (default 10), nothing
  else.
* Its parts: one per study of a v2 answer (``{"studies": […]}`` or one study), with the
  ``fields`` projection it was recorded under (a raw body: None, the whole study, since
  citeseal cannot tell a projected one). The retired classic API's bodies are recognised so
  that its parser says so.
* A part serves a request whose fields it covers (:func:`serves`): every field asked is a
  module path (``protocolSection.statusModule``) inside one it holds, and the study is cut
  down to the fields asked, as the API would; fields named as pieces (``NCTId``) are served
  only by a part recorded with exactly those fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pipeline.sources.base import (
    Asked,
    Part,
    ReplayKind,
    ReplayShape,
    Split,
    Unit,
    page_size,
    replay_ids,
)

_NCT = re.compile(r"NCT\d{8}")
_PIECE = re.compile(r"[A-Z]")  # ClinicalTrials.gov piece names start upper case, paths lower


def _normal_nct(raw: str) -> str | None:
    value = raw.strip().upper()
    return value if _NCT.fullmatch(value) else None


def field_set(fields: str | None) -> tuple[str, ...] | None:
    """A ``fields`` parameter as a sorted tuple (None: not given, the whole study)."""
    if fields is None:
        return None
    return tuple(sorted({f.strip() for f in fields.split(",") if f.strip()}))


def _covered(asked: str, held: Sequence[str]) -> bool:
    return any(asked == h or asked.startswith(h + ".") for h in held)


def serves(part: Part, fields: tuple[str, ...] | None) -> bool:
    """Whether a held study answers a request for ``fields`` (module docstring)."""
    if fields == part.fields:
        return True
    if fields is None or any(_PIECE.match(f) for f in fields):
        return False
    return part.fields is None or all(_covered(f, part.fields) for f in fields)


def _project(study: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """The study cut down to the module paths of ``fields`` (missing paths are left out)."""
    out: dict[str, Any] = {}
    for field in fields:
        steps = field.split(".")
        node: Any = study
        for step in steps:
            node = node.get(step) if isinstance(node, Mapping) else None
        if node is None:
            continue
        into = out
        for step in steps[:-1]:
            into = into.setdefault(step, {})
        into[steps[-1]] = node
    return out


def _answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    fields = asked.fields
    studies = [
        _project(v, fields) if fields is not None and p.fields != fields else v
        for p, v in ((p, json.loads(p.fragment)) for p in held)
    ]
    return 200, "application/json", json.dumps({"studies": studies}, ensure_ascii=False)


STUDIES = ReplayKind("clinicaltrials-ids", "NCT id", "nct", _normal_nct, _answer, serves)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if path != "/api/v2/studies":
        return None
    fields = params.pop("fields", None)
    size = page_size(params.pop("pageSize", "10"))
    if params.pop("format", "json") != "json" or params.keys() != {"filter.ids"}:
        return None
    ids = replay_ids(STUDIES, params["filter.ids"].split(","))
    if not ids or size is None or size < len(ids):
        return None
    return Asked(STUDIES.name, ids, fields=field_set(fields), size=size)


def _studies(value: Any) -> list[Any]:
    if not isinstance(value, dict):
        return []
    items = value.get("studies") if "studies" in value else [value]
    return items if isinstance(items, list) else []


def _split(value: Any, url: str | None, asked: Asked | None) -> Split:
    del asked
    fields = field_set(dict(parse_qsl(urlsplit(url).query)).get("fields")) if url else None
    texts = [json.dumps(study, ensure_ascii=False) for study in _studies(value)]
    return Split(units=[Unit(STUDIES.name, text, fields=fields) for text in texts])


REPLAY = ReplayShape(
    kinds=(STUDIES,),
    asked=_asked,
    split=_split,
    xml_roots=("clinical_study", "search_results"),  # the retired classic API: its parser says so
    json_keys=("studies", "protocolSection", "FullStudiesResponse", "FullStudy"),
    items=_studies,
)
