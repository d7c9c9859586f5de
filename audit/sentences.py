"""Markdown blocks and sentence boundaries for answer text (used by :mod:`audit.citations`).

Blocks: an ATX (``# …``) or setext heading, a list item (``-``, ``*``, ``+``, ``1.``, ``1)``
with its continuation lines), a table row, or a paragraph (lines up to a blank line). Inside a
reference section (:mod:`audit.reference_sections`, the extractor's definition) the heading
line is a heading (a bold or plain-line one too) and every list item, table row or paragraph
of the body is a ``reference_entry``; a lower-level ``#`` heading in the body stays a heading.
Blockquote markers and code fences are stripped; a fenced block's lines read as a paragraph,
so a handle inside one is still audited. A fence line itself is no block: a handle in it (an
info string) is cited by the sweep of :func:`audit.citations.parse_answer`. Every block keeps
the answer offsets of its lines; mapping an offset back costs O(log lines).

Sentences: a boundary is ``.``, ``!`` or ``?`` (plus closing quotes/brackets/emphasis)
followed by whitespace and a capital letter, a digit, an opening quote or bracket — unless
the word before the full stop is an abbreviation (``e.g.``, ``et al.``, ``vs.``, ``Fig.``, an
initial, …). Decimals (``2.5``) never split because no space follows the point. A bold
lead-in at the start of a block (``**Safety.** …``, ``**Dose:** …``) is its own sentence.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

from audit.folding import spaced
from audit.reference_sections import ReferenceSection, reference_sections

ABBREVIATIONS = frozenset(
    {"e.g.", "i.e.", "et al.", "al.", "vs.", "v.", "cf.", "approx.", "ca.", "fig.", "figs."}
    | {"tab.", "ref.", "refs.", "no.", "nos.", "vol.", "p.", "pp.", "ch.", "sec.", "eq."}
    | {"dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "jr.", "sr.", "inc.", "ltd.", "co."}
    | {"resp.", "incl.", "excl.", "min.", "max.", "mo.", "wk.", "yr.", "yrs.", "hr.", "hrs."}
    | {"jan.", "feb.", "mar.", "apr.", "jun.", "jul.", "aug.", "sep.", "sept.", "oct."}
    | {"nov.", "dec.", "u.s.", "u.k.", "e.u.", "spp.", "sp.", "var.", "subsp.", "n.b."}
)

_HEADING = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+|$)")
_HEADING_CLOSE = re.compile(r"[ \t]+#+[ \t]*$")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\S)")
_TABLE_SEPARATOR = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_RULE = re.compile(r"[ ]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*$")
_FENCE = re.compile(r"[ ]{0,3}(?:```|~~~)")
_QUOTE_MARKER = re.compile(r"[ ]{0,3}(?:>[ ]?)+")

_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]*_]*(?=\s)")
_STARTER = re.compile(r"\s+[\"'“‘(\[*_]*[A-Z0-9]")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+")

_LEAD_IN = re.compile(r"[ \t]*(\*\*|__)(?P<text>[^*_\n]{1,120}?)\1[ \t]*(?P<punct>[:.—–-]?)")


@dataclass(frozen=True)
class Block:
    """A block's kind and the answer spans of its lines' content (markers stripped)."""

    kind: str  # "heading" | "list_item" | "paragraph" | "table_row" | "reference_entry"
    segments: tuple[tuple[int, int], ...]

    def text(self, answer: str) -> str:
        """The block's content lines joined with newlines."""
        return "\n".join(answer[start:end] for start, end in self.segments)

    @cached_property
    def _text_starts(self) -> list[int]:
        """Where each segment starts in :meth:`text` (computed once: a block can have
        thousands of lines and every citation maps offsets back)."""
        starts: list[int] = []
        position = 0
        for start, end in self.segments:
            starts.append(position)
            position += end - start + 1
        return starts

    def to_answer(self, offset: int) -> int:
        """Map an offset in :meth:`text` back to an offset in the answer."""
        starts = self._text_starts
        index = max(0, bisect_right(starts, offset) - 1)
        start, end = self.segments[index]
        return min(start + offset - starts[index], end)


class _Builder:
    """Collects lines into blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.kind: str | None = None
        self.segments: list[tuple[int, int]] = []
        self.in_references = False  # inside a reference section's body

    def flush(self) -> None:
        if self.kind is not None and any(end > start for start, end in self.segments):
            self.blocks.append(Block(self.kind, tuple(self.segments)))
        self.kind, self.segments = None, []

    def start(self, kind: str, segment: tuple[int, int]) -> None:
        self.flush()
        if self.in_references and kind != "heading":
            kind = "reference_entry"
        self.kind, self.segments = kind, [segment]

    def emit(self, kind: str, segment: tuple[int, int]) -> None:
        self.start(kind, segment)
        self.flush()


def _classify(builder: _Builder, line: str, at: int, in_fence: bool) -> None:
    """Add one line (without its newline) starting at answer offset ``at``."""
    end = at + len(line.rstrip())
    if in_fence:
        if builder.kind != "paragraph":
            builder.start("paragraph", (at, end))
        else:
            builder.segments.append((at, end))
        return
    if match := _HEADING.match(line):
        # the closing #s may follow the opening's blank (CommonMark: "## ##" is an empty heading)
        close = _HEADING_CLOSE.search(line, match.end(1))
        stop = at + max(match.end(), close.start()) if close else end
        builder.emit("heading", (at + match.end(), stop))
    elif builder.kind == "paragraph" and len(builder.segments) == 1 and _SETEXT.match(line):
        builder.kind = "heading"
        builder.flush()
    elif _RULE.match(line):
        builder.flush()
    elif match := _LIST_ITEM.match(line):
        builder.start("list_item", (at + match.end(), end))
    elif line.lstrip().startswith("|"):
        if not _TABLE_SEPARATOR.match(line):
            first = line.index("|") + 1
            last = line.rstrip().rstrip("|")
            builder.emit("table_row", (at + first, at + max(first, len(last))))
        else:  # the row above a separator row is the table's header
            builder.flush()
            if builder.blocks and builder.blocks[-1].kind == "table_row":
                builder.blocks[-1] = Block("heading", builder.blocks[-1].segments)
    elif builder.kind in ("paragraph", "list_item", "reference_entry"):
        builder.segments.append((at + len(line) - len(line.lstrip()), end))
    else:
        builder.start("paragraph", (at + len(line) - len(line.lstrip()), end))


def split_blocks(answer: str, skip: frozenset[int] = frozenset()) -> list[Block]:
    """The answer's blocks; lines starting at an offset in ``skip`` act as blank lines."""
    builder = _Builder()
    sections = reference_sections(answer)
    starts = [section.start for section in sections]
    at = 0
    in_fence = False
    for raw in answer.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        line_at = at
        at += len(raw)
        section = _section_at(sections, starts, line_at)
        if builder.in_references != (section is not None and line_at >= section.body):
            builder.flush()
            builder.in_references = not builder.in_references
        if section is not None and line_at < section.body and line_at not in skip:
            _section_heading(builder, line, line_at, section)
            continue
        if line_at in skip or not line.strip():
            builder.flush()
            continue
        if match := _QUOTE_MARKER.match(line):
            line, line_at = line[match.end() :], line_at + match.end()
            if not line.strip():
                builder.flush()
                continue
        if _FENCE.match(line):
            builder.flush()
            in_fence = not in_fence
            continue
        _classify(builder, line, line_at, in_fence)
    builder.flush()
    return builder.blocks


def _section_at(
    sections: list[ReferenceSection], starts: list[int], offset: int
) -> ReferenceSection | None:
    """The reference section holding the line that starts at ``offset``, if any."""
    index = bisect_right(starts, offset) - 1
    if index >= 0 and offset < sections[index].end:
        return sections[index]
    return None


def _section_heading(builder: _Builder, line: str, at: int, section: ReferenceSection) -> None:
    """A line before a reference section's body: the heading (``#``, bold or plain) is a
    heading block; its setext underline is no block."""
    builder.flush()
    if at != section.start:
        return
    match = _HEADING.match(line)  # a section heading has no closing hashes
    begin = match.end() if match else len(line) - len(line.lstrip())
    builder.emit("heading", (at + begin, at + len(line.rstrip())))


def _is_abbreviation(text: str, stop: int) -> bool:
    """True when the word ending at ``stop`` (just after its ``.``) is an abbreviation."""
    begin = stop
    while begin > 0 and not text[begin - 1].isspace():
        begin -= 1
    word = text[begin:stop].lstrip("(\"'“‘*_[").lower()
    if word in ABBREVIATIONS or text[max(0, stop - 6) : stop].lower() == "et al.":
        return True
    return bool(_INITIALS.fullmatch(word))  # "J.", "U.S.", "e.g."


def sentence_spans(text: str, start: int = 0) -> list[tuple[int, int]]:
    """Spans of the sentences of ``text[start:]`` (whitespace between them belongs to none)."""
    spans: list[tuple[int, int]] = []
    begin = start
    for match in _BOUNDARY.finditer(text, start):
        stop = match.end()
        if not _STARTER.match(text, stop):
            continue
        if text[match.start()] == "." and _is_abbreviation(text, match.start() + 1):
            continue
        spans.append((begin, stop))
        begin = stop
    spans.append((begin, len(text)))
    result: list[tuple[int, int]] = []
    for span_start, span_end in spans:
        while span_start < span_end and text[span_start].isspace():
            span_start += 1
        if span_start < span_end:
            result.append((span_start, span_end))
    return result


def lead_in_end(text: str) -> int | None:
    """The end of a bold lead-in (``**Safety.**``, ``**Dose**:``) at the start of ``text``."""
    match = _LEAD_IN.match(text)
    if match is None:
        return None
    body = match.group("text").strip()
    rest = text[match.end() :].strip()
    if not rest or not body or not (body[-1] in ".:!?" or match.group("punct")):
        return None
    return match.end()


_EMPHASIS = re.compile(r"\*\*|__")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)\]])")


def clean(text: str) -> str:
    """Display text of a sentence: emphasis markers dropped, whitespace tidied."""
    text = _EMPHASIS.sub("", text)
    text = spaced(text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)
