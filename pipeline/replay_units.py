"""Place one recorded body: what it answers, split into the parts a by-id answer is made of.

:func:`place` takes a body (and, from a wrapper file, its request and status) and says what
it answers. Nothing here names a source: the source is the one whose API the wrapper's URL
belongs to (its ``shapes.hosts``), or, for a raw body, the first registered source whose
:class:`~pipeline.sources.base.ReplayShape` recognises it (the local name of its XML root,
a top-level key of a JSON object, a key of a JSON list's first object; sources of one's own
are tried before the built-ins, whose keys are broad: openFDA's ``results``). The source's
shape cuts the body into:

* **parts** (:class:`pipeline.sources.base.Part`) — one per record of a by-id kind: each
  unit is parsed alone with the source's own parser, and its id is the id of the record that
  parse gives (of the kind's scheme); a record the parser refuses is noted, not placed. A
  shape may also place parts without a record of their own (Crossref's notices of a DOI,
  from a wrapper whose request names it).
* **absent ids** — a wrapper of a by-id request whose whole answer (the shape's ``items``
  hold its count of hits, or no count and no further page) lacks some ids asked: the API
  answered without them, so an answer for them leaves them out too. An answer the shape
  gives a reason against (not the whole list) records no id absent.
* **an exact exchange** — a wrapper of any other request of a registered source (a search,
  a page, a full text, a redirect, a status its shape ``kept``), kept to be matched by its
  exact key; a raw XML body whose shape has a ``raw_url`` (Europe PMC's ``fullTextXML``)
  becomes the exchange of that URL for the record it holds.

Otherwise :attr:`Placement.reason` says, in one line, why nothing could be placed: a raw body
no registered source recognises is such a reason, never silently nothing. A source without a
replay shape (arXiv, OpenAlex, local) has its wrappers kept as exact exchanges only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)

from pipeline.errors import ParseError
from pipeline.records import ParseResult
from pipeline.replay_match import asked_of, replay_shape, source_of_url
from pipeline.sources import BUILTIN_NAMES, sources
from pipeline.sources.base import Part, ReplayKind, ReplayShape, Source, Split
from pipeline.xmlsafe import load_json, parse_xml

__all__ = ["Exchange", "Placement", "kinds_held", "place", "source_of_url"]

FAILED = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Exchange:
    """A request and its answer, to be written as a wrapper file (credentials stripped)."""

    method: str
    url: str
    status: int
    content_type: str
    body: str
    request_body: str | None = None
    location: str | None = None


@dataclass
class Placement:
    """What one body answers (module docstring)."""

    source: str | None = None
    parts: list[Part] = field(default_factory=list)
    exchange: Exchange | None = None
    reason: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return bool(self.parts or self.exchange)


def _sniffing_order() -> list[tuple[Source, ReplayShape]]:
    """The sources with a replay shape, those of one's own first (module docstring)."""
    shaped = [(p, s) for p in sources() if (s := replay_shape(p)) is not None]
    return [x for x in shaped if x[0].name not in BUILTIN_NAMES] + [
        x for x in shaped if x[0].name in BUILTIN_NAMES
    ]


def _sniff(body: str) -> tuple[Source | None, Any]:
    """The source a raw body's shape shows, and the parsed XML root or JSON value."""
    head = body.lstrip("\ufeff \t\r\n")
    if not head.startswith(("<", "{", "[")):
        raise ParseError("neither JSON nor XML (a response body starts with {, [ or <)")
    if head.startswith("<"):
        root = parse_xml(body, what="a response body (XML)")
        tag = etree.QName(root).localname if isinstance(root.tag, str) else ""
        found = (p for p, shape in _sniffing_order() if tag in shape.xml_roots)
        return next(found, None), root
    data = load_json(body, what="a response body (JSON or XML)")
    if isinstance(data, list):
        first = data[0] if data else None
        keys = set(first) if isinstance(first, dict) else set()
        found = (p for p, shape in _sniffing_order() if keys & set(shape.list_keys))
        return next(found, None), data
    keys = set(data) if isinstance(data, dict) else set()
    found = (p for p, shape in _sniffing_order() if keys & set(shape.json_keys))
    return next(found, None), data


def place(
    body: str,
    *,
    url: str | None = None,
    method: str = "GET",
    form: str | None = None,
    status: int = 200,
    content_type: str = "",
    location: str | None = None,
) -> Placement:
    """What ``body`` answers (module docstring); ``url`` and the rest come from a wrapper."""
    plugin = source_of_url(url) if url else None
    if url and plugin is None:
        host = urlsplit(url).hostname or url[:60]
        return Placement(reason=f"recorded from {host}, which is no registered source's API")
    source = plugin.name if plugin is not None else None
    if status in FAILED:
        return Placement(source, reason=f"a failed answer (HTTP {status}), not a record")
    shape = replay_shape(plugin) if plugin is not None else None
    exchange = (
        Exchange(method.upper(), url, status, content_type, body, form, location) if url else None
    )
    if exchange is not None and (
        300 <= status < 400 or (shape is not None and status in shape.kept)
    ):  # a redirect (replayed hop by hop), a status the source keeps as recorded
        return Placement(source, exchange=exchange)
    if status != 200 and not (shape is not None and status == shape.no_match):
        return Placement(source, reason=f"answered HTTP {status}, which holds no record")
    asked = asked_of(method, url, form) if url else None
    try:
        found, value = _sniff(body)
        plugin = plugin or found
        if plugin is None:
            return Placement(reason=_shapeless(body, value) or _unknown(value))
        source, shape = plugin.name, replay_shape(plugin)
        result = plugin.parse(body, url=url)
    except ParseError as error:
        return Placement(source, reason=f"its body does not parse: {error.message}")
    placement = Placement(source, exchange=exchange if asked is None else None)
    kinds = {k.name: k for k in shape.kinds} if shape is not None else {}
    if status != 200 and (asked is None or asked.kind not in kinds):
        return placement  # a no-match answer to a search: as recorded
    if shape is not None:
        split = shape.split(value, url, asked)
        _keep_split(placement, plugin, kinds, split)
        whole = split.reason is None and _whole(shape, value, result)
        if asked is not None and asked.kind in kinds and whole:
            held = {p.ident for p in placement.parts if p.kind == asked.kind}
            placement.parts += [Part(asked.kind, i, held=False) for i in asked.ids if i not in held]
        raw = url is None and not isinstance(value, (dict, list))
        if raw and shape.raw_url is not None and result.records:
            _raw_exchange(placement, shape, body, result.records[0].record_id, content_type)
    if not placement.placed and placement.reason is None:
        placement.reason = _nothing(source, url, result.records)
    return placement


def _keep_split(
    placement: Placement, plugin: Source, kinds: dict[str, ReplayKind], split: Split
) -> None:
    """A shape's split into ``placement``: each unit parsed alone (module docstring)."""
    placement.notes += split.notes
    if split.reason is not None:
        placement.reason = split.reason
    for unit in split.units:
        kind = kinds[unit.kind]
        try:
            result = plugin.parse(unit.body if unit.body is not None else unit.text)
        except ParseError as error:
            placement.notes.append(f"a {kind.what} record not placed: {error.message}")
            continue
        for refusal in result.refused:
            placement.notes.append(
                f"a {kind.what} record not placed, its parser refuses it: {refusal.reason} "
                f"({refusal.value!r})"
            )
        ids = [r.record_id for r in result.records] or list(result.ids)
        for record_id in ids[:1]:
            prefix, _, ident = record_id.partition(":")
            if prefix == kind.scheme:
                placement.parts.append(
                    Part(kind.name, ident, held=True, fragment=unit.text, fields=unit.fields)
                )
    placement.parts += split.parts


def _shapeless(body: str, value: Any) -> str | None:
    """Why a raw body of a source without a replay shape is not importable, when the body
    has that source's ``shapes`` (those ``citeseal parse auto`` tells it by), else None."""
    head = body.lstrip("\ufeff \t\r\n")[:4096].encode("utf-8")
    for plugin in sources():
        if replay_shape(plugin) is not None:
            continue
        shapes = plugin.shapes
        xml = head.startswith(b"<") and any(m in head for m in shapes.xml)
        keys = isinstance(value, dict) and any(all(k in value for k in t) for t in shapes.json)
        if xml or keys:
            return (
                f"a raw {plugin.name} body: {plugin.name} has no replay shape, so only its "
                "recorded wrapper files are imported (kept for their exact request)"
            )
    return None


def _unknown(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:6]) or "none"
        return f"a JSON body of no known source (keys: {keys[:120]})"
    if isinstance(value, list):
        return "a JSON list of no known source"
    if value is not None and not isinstance(value, (str, int, float, bool)):
        tag = etree.QName(value).localname if isinstance(value.tag, str) else "?"
        return f"an XML body of no known source (<{tag[:40]}>)"
    return "a JSON value of no known source"


def _nothing(source: str, url: str | None, records: list[Any]) -> str:
    if url is None:
        if records:
            schemes = sorted({r.record_id.partition(":")[0] for r in records})
            return (
                f"a raw {source} body whose records ({', '.join(schemes)}) answer no request "
                "citeseal makes by id"
            )
        return f"a raw {source} body without its request URL: what it answers is unknown"
    return f"a {source} answer with no record to place"


def _whole(shape: ReplayShape, value: Any, result: ParseResult) -> bool:
    """Whether a by-id answer is all the API had for the ids asked: its count of hits is no
    more than it lists, or it has no count and no further page (a shape without ``items``:
    every by-id answer is whole, like efetch and the PubTator3 export)."""
    if shape.items is None:
        return True
    if result.count is not None:
        return result.count <= len(shape.items(value))
    return result.next is None


def _raw_exchange(
    placement: Placement, shape: ReplayShape, body: str, record_id: str, content_type: str
) -> None:
    """A raw XML body as the exchange of the request its record answers (``raw_url``)."""
    assert shape.raw_url is not None
    url = shape.raw_url(record_id)
    if url is not None:
        placement.exchange = Exchange("GET", url, 200, content_type or "application/xml", body)


def kinds_held(parts: Iterable[Part]) -> dict[str, int]:
    """How many ids each kind holds (absent ones not counted)."""
    counts: dict[str, int] = {}
    for part in parts:
        if part.held:
            counts[part.kind] = counts.get(part.kind, 0) + 1
    return counts
