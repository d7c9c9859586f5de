"""PubTator3 BioC JSON → entity annotations on PubMed passages.

The export (``publications/export/biocjson?pmids=…``) holds, per PMID, a ``title`` passage and
one ``abstract`` passage; annotation offsets are document-level. A structured abstract is one
BioC passage with its section labels inlined ("BACKGROUND: … METHODS: …"), whereas PubMed
gives one passage per section. The mapping into our passage paths (``title``, ``abstract.N``):

1. With the PubMed record at hand (:func:`fetch_annotations` ``records=``, or :func:`align`),
   each of our passage texts is located in the BioC passage text (title in the title passage,
   ``abstract.1``, ``abstract.2``… in order in the abstract passage), which gives each of our
   passages a BioC start offset.
2. Without it (:func:`parse`), the abstract is split at inline labels: a label (a capitalised
   word and up to four more words) followed by ``:`` at the very start marks a structured
   abstract, and each further such label right after a sentence end starts the next section.
   This heuristic can split wrongly (a sentence such as "Two arms were compared: …" inside a
   structured abstract); prefer 1. when the record is known.

Text is compared with every Unicode space treated as a plain space (PubMed keeps NBSP where
PubTator3 has a space) and with superscripts and subscripts flattened (our passages keep
``10³`` and ``CYP_(3A4)`` where PubTator3 has ``103`` and ``CYP3A4``:
:func:`pipeline.xmlsafe.flatten_scripts`, whose offset map takes a span back to the passage);
the annotation text stored is the passage's own text at that span.

An annotation lands in the passage whose span contains it, with ``start``/``end`` relative to
that passage's text; one that straddles two passages or whose text does not match the passage
text at that place is dropped. Annotations in full-text passages (``&full=true``) are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import Annotation, ParseResult, Passage, Record, Refusal
from pipeline.retry_policy import is_rate_limit_body
from pipeline.sources import citable
from pipeline.sources import jsonshape as shape
from pipeline.sources.base import (
    Asked,
    Part,
    Plugin,
    Rate,
    ReplayKind,
    ReplayShape,
    Request,
    Shapes,
    Split,
    Unit,
    replay_ids,
)
from pipeline.sources.paging import send
from pipeline.xmlsafe import flatten_scripts, load_json, plain_scripts

if TYPE_CHECKING:
    from pipeline.sources.base import EnrichContext

SOURCE = "pubtator3"
EXPORT_URL = "https://www.ncbi.nlm.nih.gov/research/pubtator3-api/publications/export/biocjson"
BATCH = 100  # PMIDs per export request

_WORD = r"[A-Z][A-Za-z0-9/&'()\-]*"
_ANY_WORD = r"[A-Za-z0-9][A-Za-z0-9/&'()\-]*"
# "BACKGROUND", "METHODS AND FINDINGS", "Background", "Methods and findings" (≤ 5 words)
_LABEL = rf"{_WORD}(?:,? {_ANY_WORD}){{0,4}}"
_FIRST_LABEL = re.compile(rf"^({_LABEL}):\s+")
_NEXT_LABEL = re.compile(rf"(?<=[.?!)\]]) ({_LABEL}):\s+")


# every character str.isspace() holds a space but the plain one (tests check the list)
SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_PLAIN_SPACES = dict.fromkeys(map(ord, SPACES), " ")


def _same_width(text: str) -> str:
    """``text`` with every Unicode space (NBSP, thin space…) as a plain space and every
    superscript/subscript character as its plain character; same length, so offsets found in
    the result are offsets in ``text``."""
    return plain_scripts(text).translate(_PLAIN_SPACES)


@dataclass(frozen=True)
class _Section:
    """A passage placed in the BioC text: ``flat`` (what is compared with the BioC text)
    starts at document offset ``start``; ``where[i]`` is the offset in ``text`` of ``flat[i]``
    (None: ``flat`` is ``text``, as for BioC's own text)."""

    path: str
    start: int
    text: str
    flat: str
    where: list[int] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of ``text`` that ``flat[start:end]`` came from; a span that
        ends inside a ``^(…)`` / ``_(…)`` it opened takes the closing parenthesis with it."""
        if self.where is None:
            return start, end
        if end == start:
            return self.where[start], self.where[start]
        first, last = self.where[start], self.where[end - 1] + 1
        opened = len(_OPENING.findall(self.text, first, last))
        if opened > self.text.count(")", first, last) and self.text[last : last + 1] == ")":
            last += 1
        return first, last


_OPENING = re.compile(r"[\^_]\(")


@dataclass
class _Mention:
    offset: int  # document-level
    length: int
    text: str
    type: str
    identifier: str | None


@dataclass
class _Doc:
    pmid: str
    title: tuple[int, str] | None = None  # (document offset, text)
    abstract: tuple[int, str] | None = None
    mentions: list[_Mention] = field(default_factory=list)


# -- parsing -------------------------------------------------------------------------------
def _documents(body: str | bytes) -> tuple[list[_Doc], list[Refusal]]:
    """The documents of a body, and those refused (a PMID that breaks the pmid grammar)."""
    data = load_json(body, what="PubTator3 BioC JSON")
    if isinstance(data, dict) and isinstance(data.get("PubTator3"), list):
        raw, path = data["PubTator3"], "PubTator3"
    elif isinstance(data, dict) and isinstance(data.get("documents"), list):
        raw, path = data["documents"], "documents"  # a plain BioC collection
    elif isinstance(data, list):
        raw, path = data, ""
    elif isinstance(data, dict) and isinstance(data.get("passages"), list):
        raw, path = [data], ""
    else:
        raise ParseError("expected PubTator3 BioC JSON (documents with passages)")

    def at(n: int) -> str:
        return shape.index(path, n) if path or len(raw) > 1 else "the document"

    found = (_document(at(n), shape.obj(SOURCE, at(n), item)) for n, item in enumerate(raw))
    return citable.partition(found, lambda doc: citable.refusal(f"pmid:{doc.pmid}"))


def _document(where: str, raw: dict[str, Any]) -> _Doc:
    pmid = shape.opt_id(SOURCE, f"{where}.pmid", raw.get("pmid")) or shape.opt_id(
        SOURCE, f"{where}.id", raw.get("id")
    )
    doc = _Doc(pmid=(pmid or "").split("|")[0])
    passages = raw.get("passages")
    if not isinstance(passages, list):
        raise ParseError(f"PubTator3 document {doc.pmid[:40]} has no passages list")
    for at, passage in shape.objs(SOURCE, f"{where}.passages", passages):
        infons = shape.opt_obj(SOURCE, f"{at}.infons", passage.get("infons"))
        kind = (
            shape.opt_str(SOURCE, f"{at}.infons.type", infons.get("type"))
            or shape.opt_str(SOURCE, f"{at}.infons.section_type", infons.get("section_type"))
            or ""
        ).lower()
        offset = _offset(f"{at}.offset", passage.get("offset"))
        text = shape.text(SOURCE, f"{at}.text", passage.get("text"))
        if kind == "title" and doc.title is None:
            doc.title = (offset, text)
        elif kind == "abstract" and doc.abstract is None:
            doc.abstract = (offset, text)
        else:
            continue
        for an, annotation in shape.objs(SOURCE, f"{at}.annotations", passage.get("annotations")):
            doc.mentions.extend(_mentions(an, annotation))
    return doc


def _offset(where: str, value: object) -> int:
    """A character offset or length: a non-negative integer (absent is 0)."""
    number = shape.opt_int(SOURCE, where, value)
    if number is not None and number < 0:
        raise ParseError(f"{SOURCE}: {where} must be a non-negative integer, got {number}")
    return number or 0


def _mentions(where: str, annotation: dict[str, Any]) -> list[_Mention]:
    infons = shape.opt_obj(SOURCE, f"{where}.infons", annotation.get("infons"))
    identifier = shape.opt_id(SOURCE, f"{where}.infons.identifier", infons.get("identifier"))
    if identifier in ("", "-", "None"):
        identifier = None
    text = shape.text(SOURCE, f"{where}.text", annotation.get("text"))
    kind = shape.opt_str(SOURCE, f"{where}.infons.type", infons.get("type")) or "Unknown"
    return [
        _Mention(
            offset=_offset(f"{at}.offset", location.get("offset")),
            length=_offset(f"{at}.length", location.get("length")),
            text=text,
            type=kind,
            identifier=identifier,
        )
        for at, location in shape.objs(SOURCE, f"{where}.locations", annotation.get("locations"))
    ]


def _label_sections(offset: int, text: str) -> list[_Section]:
    """Heuristic sections of a BioC abstract passage (document offsets)."""
    first = _FIRST_LABEL.match(text)
    if not first:
        stripped = text.strip()
        start = offset + text.find(stripped) if stripped else offset
        return [_Section("abstract.1", start, stripped, stripped)] if stripped else []
    bounds: list[tuple[int, int]] = [(0, first.end())]  # (label start, body start)
    for match in _NEXT_LABEL.finditer(text, first.end()):
        bounds.append((match.start(1), match.end()))
    sections: list[_Section] = []
    for i, (_, body_start) in enumerate(bounds):
        body_end = bounds[i + 1][0] if i + 1 < len(bounds) else len(text)
        body = text[body_start:body_end].rstrip()
        if body:
            path = f"abstract.{len(sections) + 1}"
            sections.append(_Section(path, offset + body_start, body, body))
    return sections


def _placed(passage: Passage, bioc: str, base: int, cursor: int) -> _Section | None:
    """``passage`` found in the BioC text ``bioc`` (at document offset ``base``, already
    :func:`_same_width`) from ``cursor`` on: compared flattened (scripts as plain characters,
    every space plain)."""
    flat, where = flatten_scripts(passage.text)
    position = bioc.find(_same_width(flat), cursor)
    if position < 0:
        return None
    return _Section(passage.path, base + position, passage.text, flat, where)


def _located_sections(doc: _Doc, passages: Sequence[Passage]) -> list[_Section]:
    """Our passages located in the BioC text."""
    found: list[_Section] = []
    by_path = {p.path: p for p in passages}
    if doc.title is not None and "title" in by_path:
        title = _placed(by_path["title"], _same_width(doc.title[1]), doc.title[0], 0)
        if title is not None:
            found.append(title)
    if doc.abstract is not None:
        base, text = doc.abstract[0], _same_width(doc.abstract[1])
        cursor = 0
        for passage in passages:
            if not passage.path.startswith("abstract."):
                continue
            placed = _placed(passage, text, base, cursor)
            if placed is None:
                continue
            found.append(placed)
            cursor = placed.start - base + len(placed.flat)
    return found


def _map(doc: _Doc, sections: list[_Section]) -> list[Annotation]:
    annotations = []
    for mention in doc.mentions:
        for section in sections:
            relative = mention.offset - section.start
            end = relative + mention.length
            if relative >= 0 and end <= len(section.flat):
                flat = section.flat[relative:end]
                if _same_width(flat) == _same_width(mention.text):
                    first, last = section.span(relative, end)
                    annotations.append(
                        Annotation(
                            path=section.path,
                            start=first,
                            end=last,
                            text=section.text[first:last],
                            type=mention.type,
                            identifier=mention.identifier,
                        )
                    )
                break
    annotations.sort(key=lambda a: (a.path != "title", a.path, a.start, a.end, a.type))
    return annotations


def _heuristic_sections(doc: _Doc) -> list[_Section]:
    sections: list[_Section] = []
    if doc.title is not None:
        sections.append(_Section("title", doc.title[0], doc.title[1], doc.title[1]))
    if doc.abstract is not None:
        sections += _label_sections(*doc.abstract)
    return sections


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Annotations per ``pmid:N`` (paths from the inline-label heuristic, see module doc)."""
    del url
    documents, refused = _documents(body)
    return ParseResult(
        source=SOURCE,
        ids=[f"pmid:{d.pmid}" for d in documents],
        annotations={f"pmid:{d.pmid}": _map(d, _heuristic_sections(d)) for d in documents},
        refused=refused,
    )


def align(
    body: str | bytes, records: Mapping[str, Record], *, refused: list[Refusal] | None = None
) -> dict[str, list[Annotation]]:
    """Annotations per ``pmid:N`` mapped onto the given PubMed records' passages (exact);
    documents refused at parse time are appended to ``refused`` when it is given."""
    result: dict[str, list[Annotation]] = {}
    documents, dropped = _documents(body)
    if refused is not None:
        refused.extend(dropped)
    for doc in documents:
        key = f"pmid:{doc.pmid}"
        record = records.get(key)
        sections = _located_sections(doc, record.passages) if record else _heuristic_sections(doc)
        result[key] = _map(doc, sections)
    return result


# -- harvest ---------------------------------------------------------------------------------
def fetch_annotations(
    client: HttpClient,
    pmids: Sequence[str],
    *,
    records: Mapping[str, Record] | None = None,
) -> dict[str, list[Annotation]]:
    """Annotations for ``pmids`` (batches of 100, ids sorted), keyed ``pmid:N``.

    Pass the PubMed ``records`` (keyed by record id) to map spans exactly onto their passages;
    without them the inline-label heuristic is used. PMIDs PubTator3 does not know are absent.
    """
    unique = sorted({str(p) for p in pmids}, key=lambda p: (len(p), p))
    found: dict[str, list[Annotation]] = {}
    for start in range(0, len(unique), BATCH):
        request = Request(EXPORT_URL, {"pmids": ",".join(unique[start : start + BATCH])})
        response = send(client, SOURCE, request)
        refused: list[Refusal] = []
        found.update(align(response.content, records or {}, refused=refused))
        client.report_refused(SOURCE, refused)
    return found


# -- the plug-in -------------------------------------------------------------------------------
class Annotations:
    """Enrichment: PubTator3's annotations on every PubMed record (``[pubmed] annotations =
    true``), spans mapped onto the record's passages; a failed request leaves the records it
    asked for incomplete."""

    adds_records = False

    def enabled(self, spec: Any) -> bool:
        options = spec.options("pubmed")
        return bool(options is not None and getattr(options, "annotations", False))

    def enrich(self, ctx: EnrichContext, records: list[Record]) -> tuple[list[Record], set[str]]:
        pubmed = {r.record_id: r for r in records if r.source == "pubmed" and r.pmid}
        if not pubmed:
            return records, set()
        pmids = [r.pmid for r in pubmed.values() if r.pmid]
        found = ctx.call(
            SOURCE,
            "annotations",
            lambda: fetch_annotations(ctx.client, pmids, records=pubmed),
        )
        if found is None:
            return records, set(pubmed)
        annotated = [rid for rid in found if rid in pubmed]
        ctx.step(SOURCE, "annotations", len(annotated), f"{len(pmids)} PMIDs asked")
        return [
            r.model_copy(update={"annotations": found[r.record_id]})
            if r.record_id in found and r.record_id in pubmed
            else r
            for r in records
        ], set()


def _sniff(data: object) -> bool:
    """A lone BioC document or a list of them."""
    if isinstance(data, list):
        return bool(data) and isinstance(data[0], dict) and "passages" in data[0]
    return isinstance(data, dict) and "passages" in data


# -- replay by meaning (pipeline.replay_match, docs/sources.md) ------------------------------
# A by-id request: .../pubtator3-api/publications/export/biocjson?pmids=A,B (nothing else).
# Its parts: one per BioC document ({"PubTator3": [...]}, a list, or one document).
_PMID = re.compile(r"[1-9]\d{0,9}")
_EXPORT_PATH = "/pubtator3-api/publications/export/biocjson"


def _export_answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    del asked
    data = {"PubTator3": [json.loads(p.fragment) for p in held]}
    return 200, "application/json", json.dumps(data, ensure_ascii=False)


EXPORT = ReplayKind(
    "pubtator3-export",
    "PMID",
    "pmid",
    lambda raw: raw.strip() if _PMID.fullmatch(raw.strip()) else None,
    _export_answer,
)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if not path.endswith(_EXPORT_PATH):
        return None
    ids = replay_ids(EXPORT, params.pop("pmids", "").split(","))
    return Asked(EXPORT.name, ids) if ids and not params else None


def _split(value: Any, url: str | None, asked: Asked | None) -> Split:
    del url, asked
    if isinstance(value, list):
        docs = value
    elif isinstance(value, dict) and "passages" in value:
        docs = [value]
    elif isinstance(value, dict):
        docs = next((value[k] for k in ("PubTator3", "documents") if k in value), [])
    else:
        docs = []
    texts = [json.dumps(doc, ensure_ascii=False) for doc in docs]
    return Split(units=[Unit(EXPORT.name, text) for text in texts])


REPLAY = ReplayShape(
    kinds=(EXPORT,),
    asked=_asked,
    split=_split,
    json_keys=("PubTator3", "documents", "passages"),
    list_keys=("passages",),
)


ENRICHMENT = Annotations()
PLUGIN = Plugin(
    name=SOURCE,
    schemes=(),
    base_url="https://www.ncbi.nlm.nih.gov/research/pubtator3-api",
    parse_body=parse,
    # "no more than 3 requests per second"; NCBI says "API rate limit exceeded" in a 200 body
    rate=Rate("www.ncbi.nlm.nih.gov", 3.0, busy=is_rate_limit_body),
    shapes=Shapes(
        hosts=(("www.ncbi.nlm.nih.gov", "/research/pubtator3-api/"),),
        json=(("PubTator3",),),
        sniff=_sniff,
    ),
    enrichment=ENRICHMENT,
    replay=REPLAY,
    spec_test=ENRICHMENT.enabled,
)
