"""Structured reference files (BibTeX, RIS, CSL-JSON) read into :class:`Record` values.

Rules:

- **BibTeX** is parsed by bibtexparser (v2). A block that fails to parse, a duplicate key or a
  file with text but no entry is a :class:`DocumentError` naming the line. An entry starts its
  own line (after blanks or the block before it): ``see a@article{k, …}`` is prose. Titles,
  authors and venues are LaTeX-decoded; identifiers are read from the fields as written. Fields:
  ``doi``; ``pmid``; ``pmcid``; ``isbn``; ``eprint`` (arXiv, or PubMed when
  ``eprinttype = pubmed``); ``url``, ``note``, ``howpublished`` scanned for any identifier.
  Authors: ``author`` (else ``editor``) split at each `` and `` outside braces (``{Barnes
  and Noble}`` is one name; an empty name is none); year: ``year`` (else ``date``);
  venue: ``journal``/``journaltitle``/``booktitle``/``publisher``.
- **RIS** is checked line by line here (every record opens with ``TY``, closes with ``ER``,
  and every line is a ``XX  - value`` tag line or continues one) so a broken file is an error,
  never an empty result; fields come from rispy. Identifier tags: ``DO`` (DOI), ``AN`` (a PMID
  when ``DB``/``DP`` names PubMed or MEDLINE), ``SN`` (an ISBN when it has 10 or 13 digits;
  an ISSN is not an identifier here), and ``UR``/``L1``/``L2``/``LK``/``N1``/``M1``/``C1``…
  ``C8`` scanned for any identifier.
- **CSL-JSON** is an array of items (or one item). Fields: ``DOI``, ``PMID``, ``PMCID``,
  ``ISBN``; ``URL``, ``note``, ``number`` scanned. ``author`` (``family``/``given`` or
  ``literal``), ``issued`` (``date-parts`` or ``raw``), ``container-title``. A field of the
  wrong JSON type is an error naming the item.
"""

from __future__ import annotations

import json
import re
from typing import Any

from audit.errors import DocumentError
from audit.references.inputs import Field, Record, SourceText, json_string_offset, quiet_loggers

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")


_AND = re.compile(r"(?:^|\s+)and(?=\s|$)")


def _names(people: str) -> list[str]:
    """A BibTeX name list split at each ``and`` between blanks outside braces (``{Barnes
    and Noble}`` is one name); an empty name between two ``and`` is left for the caller."""
    names, start, depth, scanned = [], 0, 0, 0
    for m in _AND.finditer(people):
        for char in people[scanned : m.start()]:
            depth += (char == "{") - (char == "}")
        scanned = m.start()
        if depth == 0:
            names.append(people[start : m.start()])
            start = m.end()
    names.append(people[start:])
    return names


def _year(text: str | None) -> int | None:
    match = _YEAR.search(text or "")
    return int(match.group(1)) if match else None


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    collapsed = " ".join(text.split())
    return collapsed or None


# --- BibTeX ----------------------------------------------------------------------------------

_BIB_SCHEMES = {"doi": "doi", "pmid": "pmid", "pmcid": "pmcid", "isbn": "isbn"}
_BIB_SCANNED = ("url", "note", "howpublished")
_BIB_BLOCK = re.compile(r"^[ \t]*@", re.MULTILINE)
"""A line that opens a BibTeX block (an entry, ``@string``, ``@preamble``, ``@comment``)."""


def bibtex_records(source: SourceText) -> tuple[Record, ...]:
    """The entries of a BibTeX file, in order."""
    name, text = source.name, source.text
    try:
        from bibtexparser.entrypoint import parse_string
        from bibtexparser.model import Entry, ImplicitComment
        from pylatexenc.latex2text import LatexNodes2Text
    except ImportError as error:
        raise DocumentError(
            f"{name}: reading BibTeX needs bibtexparser and pylatexenc: {error}"
        ) from error
    with quiet_loggers("bibtexparser"):
        raw_library = parse_string(text)
    for block in raw_library.failed_blocks:
        block_raw = (block.raw or "").strip()
        first = block_raw.splitlines()[0][:60] if block_raw else ""
        kind = type(block).__name__
        problem = {
            "DuplicateBlockKeyBlock": "a second entry with the same key",
            "DuplicateFieldKeyBlock": "an entry with the same field twice",
        }.get(kind)
        if problem is None:
            reason = " ".join(str(getattr(block.error, "abort_reason", "") or "").split())
            problem = (
                f"a block that does not parse ({reason})"
                if reason
                else "a block that does not parse"
            )
        raise DocumentError(f"{name}: line {(block.start_line or 0) + 1}: {problem}: {first}")
    decoder = LatexNodes2Text(math_mode="verbatim")
    records = []
    cursor = 0
    for raw in raw_library.blocks:
        if isinstance(raw, ImplicitComment):
            continue
        written = raw.raw or ""
        start = text.find(written, cursor) if written else -1
        start = start if start >= 0 else _line_offset(text, raw.start_line or 0)
        if text[max(cursor, text.rfind("\n", 0, start) + 1) : start].strip():
            continue  # prose before it on its line: an '@' inside a sentence, not a block
        end = start + len(written)
        cursor = end
        if isinstance(raw, Entry):
            records.append(_bib_record(text, raw, decoder, start, end))
    if not records and text.strip() and not _BIB_BLOCK.search(text):
        raise DocumentError(f"{name}: no BibTeX entry found (expected @type{{key, …}})")
    return tuple(records)


def _line_offset(text: str, line: int) -> int:
    offset = 0
    for _ in range(line):
        offset = text.find("\n", offset) + 1
    return offset


def _bib_record(text: str, raw: Any, decoder: Any, start: int, end: int) -> Record:
    fields = {k.lower(): f.value for k, f in raw.fields_dict.items()}
    shown = {k: _latex(decoder, str(fields[k])) for k in _SHOWN if fields.get(k)}

    def locate(key: str) -> Field:
        value = str(fields[key])
        where = re.compile(rf"\b{re.escape(key)}\s*=", re.IGNORECASE).search(text, start, end)
        offset = text.find(value, where.end() if where else start, end)
        return Field(value, offset)

    ids: list[tuple[str, Field]] = []
    for key in fields:
        if key in _BIB_SCHEMES:
            ids.append((_BIB_SCHEMES[key], locate(key)))
        elif key == "eprint":
            kind = str(fields.get("eprinttype", fields.get("archiveprefix", "arxiv"))).lower()
            scheme = {"pubmed": "pmid", "pmc": "pmcid"}.get(kind, "arxiv")
            ids.append((scheme, locate(key)))
        elif key in _BIB_SCANNED:
            ids.append(("any", locate(key)))
    people = str(shown.get("author") or shown.get("editor") or "")
    venue = next(
        (shown[k] for k in ("journal", "journaltitle", "booktitle", "publisher") if shown.get(k)),
        None,
    )
    return Record(
        label=raw.key,
        start=start,
        end=end,
        title=_clean(_unbrace(shown.get("title"))),
        authors=tuple(a for a in (_clean(_unbrace(p)) for p in _names(people)) if a),
        year=_year(str(fields.get("year") or fields.get("date") or "")),
        venue=_clean(_unbrace(venue)),
        identifier_fields=tuple(ids),
    )


_SHOWN = ("title", "author", "editor", "journal", "journaltitle", "booktitle", "publisher")
_LATEX = re.compile(r"[\\~$]")


def _latex(decoder: Any, value: str) -> str:
    """A field's text with LaTeX decoded (only when it holds a macro, ``~`` or ``$``: decoding
    is slow, and plain text only needs its braces dropped)."""
    if _LATEX.search(value):
        with quiet_loggers("pylatexenc"):
            return str(decoder.latex_to_text(value))
    return value


def _unbrace(value: object) -> str | None:
    return None if value is None else str(value).replace("{", "").replace("}", "")


# --- RIS -------------------------------------------------------------------------------------

_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
_RIS_SCANNED = frozenset({"UR", "L1", "L2", "LK", "N1", "M1", *(f"C{n}" for n in range(1, 9))})


def ris_records(source: SourceText) -> tuple[Record, ...]:
    """The records of a RIS file, in order."""
    name, text = source.name, source.text
    spans = _ris_spans(name, text)
    try:
        import rispy
    except ImportError as error:
        raise DocumentError(f"{name}: reading RIS needs rispy: {error}") from error
    try:
        entries = rispy.loads(text)
    except (ValueError, KeyError, OSError) as error:
        raise DocumentError(f"{name}: the RIS does not parse: {error}") from error
    if len(entries) != len(spans):
        raise DocumentError(
            f"{name}: rispy read {len(entries)} records where the file has {len(spans)}"
        )
    return tuple(
        _ris_record(entry, start, end, tags)
        for entry, (start, end, tags) in zip(entries, spans, strict=True)
    )


def _ris_spans(name: str, text: str) -> list[tuple[int, int, list[tuple[str, Field]]]]:
    """Each record's span and its tag lines (tag, value with offset), checking the grammar."""
    spans: list[tuple[int, int, list[tuple[str, Field]]]] = []
    opened: tuple[int, int] | None = None  # (line, offset)
    tags: list[tuple[str, Field]] = []
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):  # rispy's lines: only \n ends one
        body = line.rstrip("\r")
        match = _TAG.match(body)
        if match:
            tag, value = match.group(1), match.group(2) or ""
            if tag == "TY":
                if opened:
                    raise DocumentError(
                        f"{name}: line {number}: TY before the ER of the record at line {opened[0]}"
                    )
                opened, tags = (number, offset), []
            elif opened is None:
                raise DocumentError(f"{name}: line {number}: {tag} outside a record (expected TY)")
            elif tag == "ER":
                spans.append((opened[1], offset + len(body), tags))
                opened = None
            else:
                tags.append((tag, Field(value, offset + match.start(2) if value else -1)))
        elif body.strip() and opened is None:
            raise DocumentError(
                f"{name}: line {number}: expected a RIS tag line like 'TY  - JOUR', got "
                f"{body.strip()[:40]!r}"
            )
        offset += len(line) + 1
    if opened:
        raise DocumentError(f"{name}: line {opened[0]}: the record has no ER line")
    if not spans and text.strip():
        raise DocumentError(f"{name}: no RIS record found")
    return spans


def _ris_record(
    entry: dict[str, Any], start: int, end: int, tags: list[tuple[str, Field]]
) -> Record:
    database = " ".join(v.value for t, v in tags if t in ("DB", "DP")).lower()
    pubmed = "pubmed" in database or "medline" in database
    ids: list[tuple[str, Field]] = []
    for tag, value in tags:
        if tag == "DO":
            ids.append(("doi", value))
        elif tag == "AN":
            ids.append(("pmid" if pubmed else "any", value))
        elif tag == "SN" and len(re.sub(r"[^\dXx]", "", value.value)) in (10, 13):
            ids.append(("isbn", value))
        elif tag in _RIS_SCANNED:
            ids.append(("any", value))
    authors = entry.get("authors") or entry.get("first_authors") or []
    year = entry.get("year") or entry.get("publication_year") or entry.get("date")
    venue = next(
        (
            entry[k]
            for k in (
                "journal_name",
                "secondary_title",
                "alternate_title3",
                "alternate_title1",
                "publisher",
            )
            if entry.get(k)
        ),
        None,
    )
    return Record(
        label=entry.get("id"),
        start=start,
        end=end,
        title=_clean(entry.get("title") or entry.get("primary_title")),
        authors=tuple(a for a in (_clean(str(p)) for p in authors) if a),
        year=_year(str(year or "")),
        venue=_clean(str(venue)) if venue else None,
        identifier_fields=tuple(ids),
    )


# --- CSL-JSON --------------------------------------------------------------------------------

_CSL_SCHEMES = {"DOI": "doi", "PMID": "pmid", "PMCID": "pmcid", "ISBN": "isbn"}
_CSL_SCANNED = ("URL", "note", "number")


def csl_records(source: SourceText) -> tuple[Record, ...]:
    """The items of a CSL-JSON file (an array of items, or one item), in order."""
    name, text = source.name, source.text
    decoder = json.JSONDecoder()
    index = len(text) - len(text.lstrip())
    items: list[tuple[Any, int, int]] = []
    try:
        if text.startswith("[", index):
            index = _skip(text, index + 1)
            while not text.startswith("]", index):
                item, end = decoder.raw_decode(text, index)
                items.append((item, index, end))
                index = _skip(text, end)
                if text.startswith(",", index):
                    index = _skip(text, index + 1)
                    if text.startswith("]", index):
                        raise json.JSONDecodeError("Expecting value", text, index)
                elif not text.startswith("]", index):
                    raise json.JSONDecodeError("Expecting ',' or ']'", text, index)
            index = _skip(text, index + 1)
        else:
            item, end = decoder.raw_decode(text, index)
            items.append((item, index, end))
            index = _skip(text, end)
        if index < len(text):
            raise json.JSONDecodeError("Extra data", text, index)
    except json.JSONDecodeError as error:
        raise DocumentError(
            f"{name}: line {error.lineno} column {error.colno}: {error.msg}"
        ) from error
    return tuple(_csl_record(name, text, n, *item) for n, item in enumerate(items, start=1))


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _csl_record(name: str, text: str, number: int, item: Any, start: int, end: int) -> Record:
    if not isinstance(item, dict):
        raise DocumentError(f"{name}: item {number} is not a JSON object")

    def string(key: str) -> str | None:
        value = item.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = value[0] if value else None
        if value is not None and not isinstance(value, str | int):
            raise DocumentError(f"{name}: item {number}: {key} is not a string")
        return None if value is None else str(value)

    ids: list[tuple[str, Field]] = []
    for key in item:
        scheme = _CSL_SCHEMES.get(key) or ("any" if key in _CSL_SCANNED else None)
        value = string(key) if scheme else None
        if scheme and value:
            key_at = re.compile(rf"{re.escape(json.dumps(key))}\s*:").search(text, start, end)
            after = key_at.end() if key_at else start
            ids.append((scheme, Field(value, json_string_offset(text, value, after, end))))
    return Record(
        label=string("id"),
        start=start,
        end=end,
        title=_clean(string("title")),
        authors=_csl_authors(name, number, item.get("author")),
        year=_csl_year(item.get("issued")),
        venue=_clean(string("container-title")),
        identifier_fields=tuple(ids),
    )


def _csl_authors(name: str, number: int, authors: Any) -> tuple[str, ...]:
    if authors is None:
        return ()
    if not isinstance(authors, list) or not all(isinstance(a, dict) for a in authors):
        raise DocumentError(f"{name}: item {number}: author is not a list of objects")
    out = []
    for person in authors:
        parts = [person.get("family"), person.get("given")]
        text = person.get("literal") or ", ".join(str(p) for p in parts if p)
        if text:
            out.append(" ".join(str(text).split()))
    return tuple(out)


def _csl_year(issued: Any) -> int | None:
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        first = parts[0][0]
        if isinstance(first, int) or (isinstance(first, str) and first.isdigit()):
            return int(first)
    return _year(str(issued.get("raw") or issued.get("literal") or ""))
