"""Reference-list entries and running-text identifiers of a document, with nearby metadata.

Rules (prose: Markdown, text, HTML, PDF):

- A **reference section** (:mod:`audit.reference_sections`, the one definition the sentence
  splitter shares) starts at a heading line whose text is ``References``, ``Reference list``,
  ``Bibliography``, ``Works cited``, ``Literature cited``, ``Sources``, ``Citations`` or
  ``Notes and references`` (any case; Markdown ``#`` heading, bold, trailing ``:`` or a setext
  underline allowed) and runs to the next heading of the same or a higher level (any ``#``
  heading after a plain-line heading) or the end.
- **Entries** in a section: when any line starts with a marker (``[1]``, ``1.``, ``1)``,
  ``-``/``*``/``+`` bullets), each marker line starts an entry and the lines below it continue
  it up to a blank line; otherwise (author-year lists) entries are split at blank lines and at
  unindented lines that start like ``Surname, I.``. Footnote definitions ``[^1]: …`` /
  ``[1]: …`` are entries wherever they stand. Every entry is a :class:`Reference`, with or
  without identifiers; its ``label`` is the marker's number or name.
- **Metadata, best effort** (docs/references.md): year = ``(2099)`` or the first plausible
  year; authors = the text before ``(year)`` (author-year), before a quoted title, or a
  Vancouver list ``Smith AB, Doe C.``, else the first sentence; title = a quoted title, else the
  sentence after the authors; venue = the sentence after the title up to its volume numbers.
  Identifiers and URLs are removed before the metadata is read.
- **Running text**: each identifier outside every entry is a Reference of kind
  ``running_text`` (its ``raw`` the line it stands on), without metadata.
- Within one reference an identifier (scheme and value) is listed once, where first written.

Structured records (BibTeX, RIS, CSL-JSON) become References of kind ``record``, their fields
taken as given (:mod:`audit.references.structured`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from audit.reference_sections import line_spans, reference_sections
from audit.references.identifiers import Found, find_identifiers, identifiers_in_field
from audit.references.inputs import Input, Record, SourceText
from audit.references.model import ExtractedDocument, Identifier, Reference

_MARKER = re.compile(
    r"^[ \t]{0,3}(?:\[(?P<a>\d+)\]|(?P<b>\d+)[.)]|[-*+](?:[ \t]+\[(?P<c>\d+)\])?)[ \t]+"
)
_FOOTNOTE = re.compile(r"^[ \t]{0,3}\[\^?(?P<label>[\w-]+)\]:[ \t]+\S")
_PARTICLES = r"(?:(?:van|von|de|der|den|del|della|di|da|du|la|le|dos|das|ter|ten|zu|al|el) )*"
_AUTHOR_START = re.compile(
    rf"^{_PARTICLES}[A-ZÀ-Þ][\w'’-]+(?: [a-z]{{1,3}})?(?: [A-ZÀ-Þ][\w'’-]+)?"
    r", (?:[A-Z]\.|[A-Z][a-z])"
)
_URL = re.compile(r"<?https?://\S+")
_YEAR_PAREN = re.compile(r"\((?P<y>1[5-9]\d\d|20\d\d)[a-z]?(?:,[^)]*)?\)")
_YEAR = re.compile(r"(?<![\d./-])(1[5-9]\d\d|20\d\d)[a-z]?(?![\d/-])")
_QUOTED = re.compile(r"[\"“](?P<t>[^\"”]{3,}?)[,.]?[\"”]")
_VANCOUVER = re.compile(
    r"^(?P<a>(?:[A-ZÀ-Þ][\w'’-]*(?: [a-z]{1,3})?(?: [A-ZÀ-Þ][\w'’-]+)* [A-Z]{1,3}"
    r"(?:,[ \t]*|[ \t]*(?=et al)|(?=\.)))+(?:et al)?)\.[ \t]+(?P<rest>.*)$",
    re.DOTALL,
)
_EMPHASIS_BEFORE_STOP = re.compile(r"[*_]+(?=[.,;:?!])")
_SENTENCE_END = re.compile(r"(?<=[^\s.][.?!])\s+(?=[\w\"“*_(\[])|(?<=\.[\"”])\s+")


@dataclass(frozen=True)
class _Entry:
    start: int
    end: int
    label: str | None


def extract_document(parsed: Input) -> ExtractedDocument:
    """Every reference of one read input, in the order they stand."""
    source = parsed.source
    if parsed.records is not None:
        references = tuple(_from_record(source, r) for r in parsed.records)
    else:
        references = tuple(references_in_prose(source))
    return ExtractedDocument(file=source.name, format=source.format, references=references)


# --- prose -----------------------------------------------------------------------------------


def references_in_prose(source: SourceText) -> list[Reference]:
    """Reference-list entries and running-text identifiers of a prose document."""
    text = source.text
    lines = line_spans(text)
    entries = _entries(text, lines)
    everything = find_identifiers(text)
    found_starts = [f.start for f in everything]
    references: list[tuple[int, Reference]] = []
    for entry in entries:
        first = bisect_right(found_starts, entry.start - 1)
        last = bisect_right(found_starts, entry.end - 1)
        references.append((entry.start, _from_entry(source, entry, everything[first:last])))
    starts = [e.start for e in entries]  # entries are sorted and disjoint
    for found in _group(everything):
        head = found[0]
        index = bisect_right(starts, head.start) - 1
        if index >= 0 and head.start < entries[index].end:
            continue
        line_start = text.rfind("\n", 0, head.start) + 1
        line_end = text.find("\n", head.end)
        line_end = len(text) if line_end < 0 else line_end
        reference = Reference(
            kind="running_text",
            identifiers=tuple(_identifier(source, f, 0) for f in found),
            raw=text[line_start:line_end].strip(),
            span=source.span(head.start, head.end),
        )
        references.append((head.start, reference))
    return [r for _, r in sorted(references, key=lambda pair: pair[0])]


def _group(found: list[Found]) -> list[list[Found]]:
    """Identifiers one by one, an arXiv DataCite DOI with the arXiv id it stands for."""
    groups: list[list[Found]] = []
    for item in found:
        if groups and (groups[-1][0].start, groups[-1][0].end) == (item.start, item.end):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _entries(text: str, lines: list[tuple[int, int]]) -> list[_Entry]:
    entries: list[_Entry] = []
    in_section: set[int] = set()
    for section in reference_sections(text, lines):
        entries.extend(_section_entries(text, lines, section.first, section.last))
        in_section.update(range(section.first, section.last))
    for number, (start, end) in enumerate(lines):
        match = _FOOTNOTE.match(text[start:end])
        if match and number not in in_section:
            stop = number + 1
            while stop < len(lines) and text[lines[stop][0] : lines[stop][1]].startswith(
                ("    ", "\t")
            ):
                stop += 1
            entries.append(_Entry(start, lines[stop - 1][1], match.group("label")))
    return sorted(entries, key=lambda e: e.start)


def _section_entries(
    text: str, lines: list[tuple[int, int]], first: int, last: int
) -> list[_Entry]:
    body = [text[s:e] for s, e in lines[first:last]]
    marked = any(_MARKER.match(line) for line in body)
    entries: list[_Entry] = []
    current: list[int] = []
    label: str | None = None

    def close() -> None:
        if current:
            entries.append(_Entry(lines[current[0]][0], lines[current[-1]][1], label))

    for index, line in enumerate(body, start=first):
        if not line.strip():
            close()
            current, label = [], None
            continue
        marker = _MARKER.match(line)
        footnote = _FOOTNOTE.match(line)  # a footnote definition is an entry here too
        starts = footnote or (
            marker if marked else (not line.startswith((" ", "\t")) and _AUTHOR_START.match(line))
        )
        if starts and current:
            close()
            current = []
        if not current:
            label = next((g for g in marker.groups() if g), None) if marker else None
            label = footnote.group("label") if footnote else label
        current.append(index)
    close()
    return entries


def _from_entry(source: SourceText, entry: _Entry, found: list[Found]) -> Reference:
    """One entry's Reference; ``found`` are the identifiers starting in it (text offsets)."""
    raw = source.text[entry.start : entry.end]
    marker = _MARKER.match(raw) or _FOOTNOTE.match(raw)
    skip = marker.end() if marker and _MARKER.match(raw) else 0
    if marker and not _MARKER.match(raw):
        skip = raw.index(":") + 1
    identifiers = _unique(_identifier(source, f, 0) for f in found)
    body = list(raw)
    for item in found:
        start, end = item.start - entry.start, min(item.end, entry.end) - entry.start
        body[start:end] = " " * (end - start)
    plain = _URL.sub(" ", "".join(body)[skip:])
    plain = _EMPHASIS_BEFORE_STOP.sub("", plain)  # "*A title*." keeps "title." whole
    plain = " ".join(plain.replace("*", " ").replace("_", " ").split())
    title, authors, year, venue = _metadata(plain)
    return Reference(
        kind="entry",
        label=entry.label,
        identifiers=identifiers,
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        raw=raw,
        span=source.span(entry.start, entry.end),
    )


def _metadata(text: str) -> tuple[str | None, tuple[str, ...], int | None, str | None]:
    """Title, authors, year and venue of one entry's plain text (best effort)."""
    year_match = _YEAR_PAREN.search(text)
    year = int(year_match.group("y")) if year_match else None
    quoted = _QUOTED.search(text)
    vancouver = _VANCOUVER.match(text)
    if year_match and not quoted:  # nothing before the year: no authors
        authors_text = text[: year_match.start()]
        rest = text[year_match.end() :].lstrip(" .")
    elif quoted:
        authors_text = text[: quoted.start()]
        rest = text[quoted.end() :]
    elif vancouver:
        authors_text, rest = vancouver.group("a"), vancouver.group("rest")
    else:
        parts = _SENTENCE_END.split(text, maxsplit=1)
        authors_text, rest = (parts[0], parts[1]) if len(parts) == 2 else ("", text)
    if year is None:
        plain_year = _YEAR.search(rest) or _YEAR.search(text)
        year = int(plain_year.group(1)) if plain_year else None
    if quoted:
        title: str | None = quoted.group("t")
        after = rest
    else:
        pieces = _SENTENCE_END.split(rest, maxsplit=1)
        title = pieces[0] if pieces[0] else None
        after = pieces[1] if len(pieces) == 2 else ""
    venue_match = re.match(r"^[\s,.;:]*(?P<v>[^\d;,.()]*[^\d;,.()\s])", after)
    venue = venue_match.group("v") if venue_match else None
    if venue and venue.startswith("In "):  # a chapter: "In Handbook (pp. 1-20)"
        venue = venue[3:]
    return _tidy(title), _authors(authors_text), year, _tidy(venue)


def _tidy(text: str | None) -> str | None:
    if text is None:
        return None
    cleaned = text.strip(" \t.,;:\"“”'")
    return cleaned or None


def _authors(text: str) -> tuple[str, ...]:
    text = text.strip(" ,;:")
    if not text:
        return ()
    if re.search(r",\s+(?:[A-Z]\.\s?)+(?:,|$|\s+&)", text) or "&" in text:
        parts = re.split(r"(?<=\.),\s+(?:&\s+)?|\s+&\s+|,?\s+and\s+", text)
    else:
        parts = re.split(r",\s+(?:and\s+)?|\s+and\s+", text)
    cleaned = (p.strip(" ,;") for p in parts)
    return tuple(p for p in cleaned if p and p.lower() not in ("et al", "et al."))


# --- shared ----------------------------------------------------------------------------------


def _identifier(source: SourceText, found: Found, base: int) -> Identifier:
    return Identifier(
        scheme=found.scheme,
        value=found.value,
        raw=found.raw,
        span=source.span(base + found.start, base + found.end),
        version=found.version,
        valid=found.valid,
        problem=found.problem,
    )


def _unique(identifiers: object) -> tuple[Identifier, ...]:
    seen: set[tuple[str, str]] = set()
    out = []
    for identifier in identifiers:  # type: ignore[attr-defined]  # an iterable of Identifier
        key = (identifier.scheme, identifier.value)
        if key not in seen:
            seen.add(key)
            out.append(identifier)
    return tuple(out)


def _from_record(source: SourceText, record: Record) -> Reference:
    identifiers: list[Identifier] = []
    for scheme, field in record.identifier_fields:
        found = (
            find_identifiers(field.value)
            if scheme == "any"
            else identifiers_in_field(scheme, field.value)  # type: ignore[arg-type]
        )
        for item in found:
            if field.offset >= 0:
                identifiers.append(_identifier(source, item, field.offset))
            else:
                identifiers.append(
                    _identifier(source, item, 0).model_copy(
                        update={"span": source.span(record.start, record.start)}
                    )
                )
    return Reference(
        kind="record",
        label=record.label,
        identifiers=_unique(identifiers),
        title=record.title,
        authors=record.authors,
        year=record.year,
        venue=record.venue,
        raw=source.text[record.start : record.end],
        span=source.span(record.start, record.end),
    )
