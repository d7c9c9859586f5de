"""Read one input into text with positions (prose) or into records (structured formats).

Rules:

- The format comes from the file's extension (:data:`EXTENSIONS`) unless one is given; a name
  with no known extension and no format given is an error, never a guess.
- Inputs larger than :data:`MAX_INPUT_BYTES` (or PDFs of more than :data:`MAX_PDF_PAGES`
  pages) are refused with :class:`~audit.errors.LimitExceeded` naming the file.
- Text formats are UTF-8 (a BOM is dropped); anything else is a :class:`DocumentError`.
- Every problem is one :class:`~audit.errors.DocumentError` line naming the file and the first
  problem. Nothing here executes input: HTML is read as text (``script``/``style``/``template``
  content dropped, entities decoded, attributes ignored).
- Positions: a :class:`SourceText` maps every offset of its text back to line/column of the
  file (HTML: of the HTML source; PDF: of the page's text layer, with the page).
- Parsers of other formats (bibtexparser, rispy, pypdf) are imported only when a file of that
  format is read, so a broken optional parser never stops the rest.
"""

from __future__ import annotations

import html
import json
import logging
import re
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, get_args

from audit.errors import DocumentError, InputError, LimitExceeded, undecodable_offset
from audit.references.model import InputFormat, Span

MAX_INPUT_BYTES = 20 * 1024 * 1024
MAX_PDF_PAGES = 2_000
FORMATS: tuple[InputFormat, ...] = get_args(InputFormat)
EXTENSIONS: dict[str, InputFormat] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".bib": "bibtex",
    ".bibtex": "bibtex",
    ".ris": "ris",
    ".json": "csl-json",
    ".pdf": "pdf",
}
STRUCTURED: frozenset[InputFormat] = frozenset({"bibtex", "ris", "csl-json"})


@dataclass(frozen=True)
class Anchor:
    """``text[offset:]`` comes from the file at ``line``/``column`` (1-based), on ``page``."""

    offset: int
    line: int
    column: int
    page: int | None = None


@dataclass(frozen=True)
class SourceText:
    """The text of one input and the map from its offsets back to the file."""

    name: str
    format: InputFormat
    text: str
    anchors: tuple[Anchor, ...] = (Anchor(0, 1, 1),)
    _newlines: list[int] = field(default_factory=list, repr=False, compare=False)
    _offsets: list[int] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._newlines.extend(m.start() for m in re.finditer("\n", self.text))
        self._offsets.extend(a.offset for a in self.anchors)

    def position(self, offset: int) -> tuple[int, int, int | None]:
        """Line, column and page of ``text[offset]`` in the file."""
        index = bisect_right(self._offsets, offset) - 1
        anchor = self.anchors[max(index, 0)]
        base = min(anchor.offset, offset)
        first = bisect_right(self._newlines, base - 1)
        last = bisect_right(self._newlines, offset - 1)
        if last == first:
            return anchor.line, anchor.column + offset - base, anchor.page
        return anchor.line + last - first, offset - self._newlines[last - 1], anchor.page

    def span(self, start: int, end: int) -> Span:
        """The :class:`Span` of ``text[start:end]`` (``end`` exclusive)."""
        line, column, page = self.position(start)
        if end > start:
            end_line, end_column, _ = self.position(end - 1)
            end_column += 1
        else:
            end_line, end_column = line, column
        return Span(
            file=self.name,
            line=line,
            column=column,
            end_line=end_line,
            end_column=end_column,
            page=page,
        )


@dataclass(frozen=True)
class Field:
    """A structured field's text and where it stands in :attr:`SourceText.text` (or -1)."""

    value: str
    offset: int = -1


@dataclass(frozen=True)
class Record:
    """One record of a structured file; ``start``/``end`` is its span in the source text."""

    label: str | None
    start: int
    end: int
    title: str | None = None
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    identifier_fields: tuple[tuple[str, Field], ...] = ()
    """(scheme or ``any``, field) pairs to read identifiers from, in the record's order."""


@dataclass(frozen=True)
class Input:
    """A read input: its text, and its records when the format is structured."""

    source: SourceText
    records: tuple[Record, ...] | None = None


@contextmanager
def quiet_loggers(*names: str) -> Iterator[None]:
    """Silence a third-party parser's own log lines while it runs: what it had to say about a
    broken file reaches the person as one DocumentError line, not as stray stderr output."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def format_for(name: str, override: str | None = None) -> InputFormat:
    """The format to read ``name`` in: ``override`` when given, else by extension."""
    if override is not None:
        if override not in FORMATS:
            raise InputError(f"unknown input format {override!r}; expected one of {_listed()}")
        return override  # type: ignore[return-value]  # checked just above
    lower = name.lower()
    for extension, fmt in EXTENSIONS.items():
        if lower.endswith(extension):
            return fmt
    raise InputError(f"{name}: cannot tell the input format from the name; give one of {_listed()}")


def _listed() -> str:
    return ", ".join(FORMATS)


def read_input(path: Path, fmt: str | None = None, *, max_bytes: int = MAX_INPUT_BYTES) -> Input:
    """Read the file at ``path`` (the only I/O here) and parse it in its format."""
    chosen = format_for(path.name, fmt)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise _too_large(str(path), size, max_bytes)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise DocumentError(f"{path}: cannot read: {error.strerror or error}") from error
    return parse_input(data, str(path), chosen, max_bytes=max_bytes)


def _too_large(name: str, size: int, limit: int) -> LimitExceeded:
    return LimitExceeded(f"{name}: {size} bytes is over the limit of {limit} bytes")


def parse_input(
    data: bytes, name: str, fmt: InputFormat, *, max_bytes: int = MAX_INPUT_BYTES
) -> Input:
    """Parse the bytes of one input (pure): ``name`` is only used in positions and errors."""
    if len(data) > max_bytes:
        raise _too_large(name, len(data), max_bytes)
    if fmt == "pdf":
        return Input(_pdf_text(data, name))
    text = _decode(data, name)
    if fmt in ("markdown", "text"):
        return Input(SourceText(name, fmt, text))
    if fmt == "html":
        return Input(_html_text(text, name))
    source = SourceText(name, fmt, text)
    if fmt == "bibtex":
        from audit.references.structured import bibtex_records

        return Input(source, bibtex_records(source))
    if fmt == "ris":
        from audit.references.structured import ris_records

        return Input(source, ris_records(source))
    from audit.references.structured import csl_records

    return Input(source, csl_records(source))


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        at = undecodable_offset(error, data)
        raise DocumentError(
            f"{name}: not UTF-8 text: byte 0x{data[at]:02x} at offset {at}"
        ) from error


# --- HTML ------------------------------------------------------------------------------------

_DROPPED = frozenset({"script", "style", "template"})
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "main",
        "aside",
        "nav",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "table",
        "tr",
        "blockquote",
        "pre",
        "figure",
        "figcaption",
        "hr",
        "address",
        "title",
        "body",
        "html",
    }
)
_LINKED = ("http://", "https://", "doi:")
_HREF = re.compile(r"(?<=['\"\s/])href\s*=\s*", re.IGNORECASE)  # where HTMLParser reads a name
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


class _TextParser(HTMLParser):
    """HTML source to text pieces, each anchored at its source position."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.pieces: list[tuple[str, int, int]] = []  # text, line, column it stands at
        self._dropped: list[str] = []
        self._lists: list[int | None] = []  # the next number of each open list (None: ul)
        self._links: list[tuple[str, int, int, int]] = []  # href, line, column, first piece

    def _add(self, text: str) -> None:
        if self._dropped or not text:
            return
        line, column = self.getpos()
        self.pieces.append((text, line, column + 1))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self._dropped.append(tag)
            return
        if tag == "a":
            self._open_link(attrs)
        elif tag in _HEADINGS:
            self._add("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            number = self._lists[-1] if self._lists else None
            marker = "- " if number is None else f"{number}. "
            if number is not None:
                self._lists[-1] = number + 1
            self._add("\n" + marker)
        elif tag in ("ol", "ul"):
            self._lists.append(1 if tag == "ol" else None)
            self._add("\n")
        elif tag == "br" or tag in _BLOCKS:
            self._add("\n")

    def _open_link(self, attrs: list[tuple[str, str | None]]) -> None:
        href = next((v for k, v in attrs if k == "href" and v), None)
        if self._dropped or not href or not href.lower().startswith(_LINKED):
            return
        line, column = self.getpos()
        tag_text = self.get_starttag_text() or ""
        attribute = _HREF.search(tag_text)  # the value itself, not the same text earlier
        at = tag_text.find(href, attribute.end() if attribute else 0)
        if at < 0:  # the value was written with entities: point at the tag itself
            at = 0
        before = tag_text[:at]
        if "\n" in before:
            line += before.count("\n")
            column = len(before) - before.rfind("\n") - 1
        else:
            column += at
        self._links.append((href, line, column + 1, len(self.pieces)))

    def _close_link(self) -> None:
        """A link's target is text too, after the link text, unless the text already has it."""
        href, line, column, first = self._links.pop()
        shown = "".join(piece[0] for piece in self.pieces[first:])
        if href not in shown:
            self.pieces += [(" <", line, column), (href, line, column), ("> ", line, column)]

    def handle_endtag(self, tag: str) -> None:
        if self._dropped and self._dropped[-1] == tag:
            self._dropped.pop()
            return
        if tag == "a" and self._links:
            self._close_link()
        if tag in ("ol", "ul") and self._lists:
            self._lists.pop()
        if tag in _BLOCKS or tag in _HEADINGS or tag == "li":
            self._add("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "hr"):
            self._add("\n")

    def handle_data(self, data: str) -> None:
        self._add(data)

    def handle_entityref(self, name: str) -> None:
        self._add(html.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self._add(html.unescape(f"&#{name};"))


def _html_text(source: str, name: str) -> SourceText:
    parser = _TextParser()
    parser.feed(source)
    parser.close()
    parts: list[str] = []
    anchors: list[Anchor] = []
    offset = 0
    for text, line, column in parser.pieces:
        anchors.append(Anchor(offset, line, column))
        parts.append(text)
        offset += len(text)
    text = "".join(parts)
    return SourceText(name, "html", text, tuple(anchors) or (Anchor(0, 1, 1),))


# --- PDF -------------------------------------------------------------------------------------


def _pdf_text(data: bytes, name: str) -> SourceText:
    pages = pdf_pages(data, name)
    anchors: list[Anchor] = []
    offset = 0
    for number, page in enumerate(pages, start=1):
        anchors.append(Anchor(offset, 1, 1, number))
        offset += len(page) + 2
    return SourceText(name, "pdf", "\n\n".join(pages), tuple(anchors))


def pdf_pages(data: bytes, name: str) -> list[str]:
    """The text layer of each page of a PDF (one reader for every PDF citeseal reads: the
    reference check and ``local:`` documents). A file that is not a PDF, does not parse, is
    encrypted, has more than :data:`MAX_PDF_PAGES` pages or no text at all is one
    :class:`DocumentError` (or :class:`LimitExceeded`) naming ``name``."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as error:  # a broken optional parser stops PDFs only
        raise DocumentError(f"{name}: reading PDF needs pypdf: {error}") from error
    from io import BytesIO

    if not data.lstrip()[:5] == b"%PDF-":
        raise DocumentError(f"{name}: not a PDF: it does not start with %PDF-")
    try:
        with quiet_loggers("pypdf"):
            pages = _pdf_pages(PdfReader(BytesIO(data)), name)
    except (PyPdfError, ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
        detail = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise DocumentError(f"{name}: the PDF does not parse: {detail}") from error
    if not any(page.strip() for page in pages):
        raise DocumentError(
            f"{name}: the PDF has no text layer (a scanned image?); citeseal reads only the text"
            " layer and does no OCR"
        )
    return pages


def _pdf_pages(reader: Any, name: str) -> list[str]:
    if reader.is_encrypted:
        raise DocumentError(f"{name}: the PDF is encrypted; citeseal reads unencrypted PDFs")
    if len(reader.pages) > MAX_PDF_PAGES:
        raise LimitExceeded(
            f"{name}: {len(reader.pages)} pages is over the limit of {MAX_PDF_PAGES} pages"
        )
    return [page.extract_text() or "" for page in reader.pages]


def json_string_offset(text: str, value: str, start: int, end: int) -> int:
    """Where ``value`` stands in ``text[start:end]`` as written (raw or JSON-escaped), or -1."""
    for written in (value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]):
        found = text.find(written, start, end)
        if found >= 0:
            return found
    return -1
