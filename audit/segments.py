"""Text segments: a passage as runs of plain, deleted, inserted and highlighted text.

What the report pages show of a passage — a word diff between two versions, a quote
highlighted, the evidence span of a support judgment marked, an excerpt window — is a tuple of
:class:`Segment` whose texts spell the passage (or the cut of it) exactly, so a template only
chooses how to show each run and escapes its text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

SegmentKind = Literal["same", "del", "ins", "mark"]


@dataclass(frozen=True)
class Segment:
    """A run of text and how to show it: plain, deleted, inserted or highlighted."""

    kind: SegmentKind
    text: str


_WORDS = re.compile(r"\s+|[^\s]+")


@lru_cache(maxsize=4096)
def word_diff(old: str, new: str) -> tuple[Segment, ...]:
    """A word-level diff of ``old`` → ``new`` (whitespace kept), deletions before insertions.

    The common leading and trailing words are set aside first, so the matcher only sees the
    region that changed (a revised passage usually differs in one place).
    """
    a = _WORDS.findall(old)
    b = _WORDS.findall(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    out: list[Segment] = [Segment("same", "".join(a[:head]))]
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(Segment("same", "".join(a_mid[i1:i2])))
            continue
        if op in ("delete", "replace"):
            out.append(Segment("del", "".join(a_mid[i1:i2])))
        if op in ("insert", "replace"):
            out.append(Segment("ins", "".join(b_mid[j1:j2])))
    out.append(Segment("same", "".join(a[len(a) - tail :])))
    return _merge(out)


def highlight(text: str, needle: str | None) -> tuple[Segment, ...]:
    """``text`` with the first occurrence of ``needle`` marked (plain text when absent).

    Any run of whitespace in ``needle`` matches any run of whitespace in ``text`` (a quote
    typed with plain spaces still marks a passage that has no-break spaces).
    """
    if needle and needle.strip():
        words = [re.escape(w) for w in needle.split()]
        found = re.search(r"\s+".join(words), text)
        if found:
            parts = [
                Segment("same", text[: found.start()]),
                Segment("mark", found.group()),
                Segment("same", text[found.end() :]),
            ]
            return tuple(p for p in parts if p.text)
    return (Segment("same", text),) if text else ()


def _merge(segments: Sequence[Segment]) -> tuple[Segment, ...]:
    """The non-empty segments. No two neighbours share a kind: the common head and tail are
    ``same`` and never equal the changed words next to them, and difflib never puts two
    changing opcodes side by side (a deletion beside an insertion is one ``replace``)."""
    return tuple(segment for segment in segments if segment.text)


def window(segments: Sequence[Segment], start: int, end: int) -> tuple[Segment, ...]:
    """The parts of ``segments`` (which spell a text) inside characters ``start:end``."""
    out: list[Segment] = []
    pos = 0
    for segment in segments:
        first, pos = pos, pos + len(segment.text)
        low, high = max(first, start), min(pos, end)
        if low < high:
            out.append(Segment(segment.kind, segment.text[low - first : high - first]))
    return tuple(out)


def marked_span(text: str, start: int, end: int) -> tuple[Segment, ...]:
    """``text`` with ``text[start:end]`` marked (plain text when the span is not inside it)."""
    if not 0 <= start < end <= len(text):
        return (Segment("same", text),) if text else ()
    parts = (
        Segment("same", text[:start]),
        Segment("mark", text[start:end]),
        Segment("same", text[end:]),
    )
    return tuple(p for p in parts if p.text)
