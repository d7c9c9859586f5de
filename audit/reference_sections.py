"""Where a document's reference sections stand: the one definition of a reference-section
heading, shared by the reference extractor (:mod:`audit.references.entries`) and the sentence
splitter (:mod:`audit.sentences`).

A **reference section** starts at a heading line whose whole text is ``References``,
``Reference list``, ``Bibliography``, ``Works cited``, ``Literature cited``, ``Sources``,
``Citations`` or ``Notes and references`` (any case; Markdown ``#`` heading, bold, trailing
``:`` or a setext underline allowed; a line that merely contains the word, "References to prior
work show X", is no heading) and runs to the next heading of the same or a higher level (any
``#`` heading after a plain-line or bold heading) or the end. Lines are split at ``\\n`` only
(a ``\\r`` before it is not part of the line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING_WORDS = (
    r"references?(?: list)?|bibliography|works cited|literature cited|sources|citations"
    r"|notes and references"
)
_SECTION = re.compile(
    rf"^[ \t]{{0,3}}(?P<hashes>#{{1,6}}[ \t]+)?(?:\*\*|__)?(?:{_HEADING_WORDS})"
    r"(?:\*\*|__)?:?[ \t]*$",
    re.IGNORECASE,
)
_ATX = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+\S")
_SETEXT = re.compile(r"^[ \t]{0,3}(=+|-+)[ \t]*$")


@dataclass(frozen=True)
class ReferenceSection:
    """One reference section as line numbers (0-based, of :func:`line_spans`) and offsets.

    The body is lines ``[first, last)``, after the heading and its setext underline;
    ``start``/``body``/``end`` are the offsets of the heading line, of the body and of the
    section's end (the next heading line, or the text's length)."""

    first: int
    last: int
    start: int
    body: int
    end: int


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line of ``text``, ``end`` before its newline (``\\r\\n`` too)."""
    out, offset = [], 0
    for line in text.split("\n"):
        out.append((offset, offset + len(line.removesuffix("\r"))))
        offset += len(line) + 1
    return out


def reference_sections(
    text: str, lines: list[tuple[int, int]] | None = None
) -> list[ReferenceSection]:
    """The reference sections of ``text`` in order (disjoint); ``lines``: its
    :func:`line_spans`, when the caller has them already."""
    lines = line_spans(text) if lines is None else lines

    def at(number: int) -> int:
        return lines[number][0] if number < len(lines) else len(text)

    out: list[ReferenceSection] = []
    number = 0
    while number < len(lines):
        match = _SECTION.match(text[lines[number][0] : lines[number][1]])
        if not match:
            number += 1
            continue
        level = len(match.group("hashes").strip()) if match.group("hashes") else 7
        first = number + 1
        if first < len(lines) and _SETEXT.match(text[lines[first][0] : lines[first][1]]):
            first += 1
            level = 1 if text[lines[first - 1][0] : lines[first - 1][1]].strip()[0] == "=" else 2
        last = first
        while last < len(lines):
            heading = _ATX.match(text[lines[last][0] : lines[last][1]])
            if heading and len(heading.group(1)) <= level:
                break
            last += 1
        out.append(ReferenceSection(first, last, at(number), at(first), at(last)))
        number = last
    return out
