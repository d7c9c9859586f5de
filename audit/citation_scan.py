"""Find citation markup in one block of answer text (used by :mod:`audit.citations`).

Pure functions over a string; every span is an offset into that string. The steps:

1. :func:`find_candidates` — every handle-looking token: a known scheme followed by ``:`` and
   something (``pmid:30831578-abstract`` is a candidate too; it will be malformed), or any
   ``word:id/path~check`` shape. Ordinary prose (``3:1``, ``10:30``, ``https://…``,
   ``PMID: 123``, ``PMID:123``) is not a candidate. Tokens are found in the look-alike
   skeleton of the text (:mod:`audit.lookalikes`), so ``ｐｍｉｄ:…``, a handle with a
   zero-width space inside, or one hidden by markup (``pmid\\:…``, ``pmid&#58;…``,
   ``pm**id**:…``) is a candidate too (and will be malformed). A known scheme glued to
   the text before it (``…/pmid:…`` in a URL, ``xx…xpmid:…``) is a *glued* candidate when the
   rest holds ``/`` or ``~``: it is cited, but its text stays in the display text. An
   unknown-scheme token right after non-ASCII text starts where that text starts (so
   ``ꓑmid:…``, a homoglyph the skeleton does not map, is one malformed token, not ``mid:…``).
2. :func:`bracket_pairs` — matching ``[]`` and ``()`` pairs, tolerant of unbalanced text; a
   quote opened inside a bracket runs to its own closing mark, and its brackets are quote text.
3. :func:`find_units` — each candidate's container: a Markdown link ``[text](handle)``, a
   group ``[…]``/``(…)`` with handles, optional quotes and separators, or nothing (a bare
   handle, possibly wrapped in ``**``/``__``/backticks and followed by a quote). A unit is
   the span that leaves the display text, with what replaces it and its citation elements;
   every candidate is the handle of at least one element. Footnote markers passed as
   ``hidden`` spans never stay in a unit's display text (they are cited on their own). A
   quote that cannot be read whole (unclosed, nested, left-over marks, a quote that ran past
   its group) gives its elements an ``error``: the citation is malformed, never audited with
   a shorter quote or none (docs/contract.md, "Quotes in citations").
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace

from audit.handles import SCHEMES
from audit.lookalikes import skeleton

# Characters that end a candidate: whitespace, brackets, quotes, separators, Markdown markers.
_STOP = r"\s\[\](){}<>\"'“”‘’„«»,;*`|"
_GLUE = "0-9A-Za-z:/.@~\\-"  # a candidate right after one of these is glued to a longer token
# A known scheme in any case, written so that both alternatives start with a character class
# (the regex engine then skips other characters fast): "[pPnNsS](?i:(?<=p)(?:mid|…)|…)".
_FIRST = "".join(sorted({scheme[0] for scheme in SCHEMES}))
_KNOWN = "|".join(
    f"(?<={first})(?:{'|'.join(s[1:] for s in SCHEMES if s[0] == first)})" for first in _FIRST
)
_CANDIDATE = re.compile(
    rf"(?P<known>[{_FIRST}{_FIRST.upper()}](?i:{_KNOWN})):(?P<rest>[^{_STOP}]+)"
    rf"|(?P<other>[A-Za-z](?<![{_GLUE}][A-Za-z])"  # the other shape never starts glued
    rf"[A-Za-z0-9_\-]{{0,19}}:[^{_STOP}/~:]+(?:@[^{_STOP}/~]+)?/[^{_STOP}~]+~[0-9A-Za-z]+)"
)
_GLUED = re.compile(rf"[{_GLUE}]")
_STOP_CHARS = frozenset("[](){}<>\"'“”‘’„«»,;*`|")
_TRAILING = ".:!?-"

# Opening quote → the characters that may close it: only its own closing mark (an ASCII '"'
# does not close a curly quote, so '“a "b" c”' is one quote).
QUOTE_CLOSERS = {'"': '"', "“": "”", "„": "“”", "«": "»", "”": "”"}
QUOTE_MARKS = frozenset("".join(QUOTE_CLOSERS) + "".join(QUOTE_CLOSERS.values()))
_LEFT_OVER = QUOTE_MARKS | {"‘"}  # in a group outside a quote: unreadable (‘ opens no quote)
_LEFT_OVER_MARK = re.compile("[" + "".join(sorted(_LEFT_OVER)) + "]")
UNCLOSED_QUOTE = (
    "the quote marks of this citation do not pair up (a quote runs to its own closing mark), "
    "so its quote cannot be read"
)
# What bracket_pairs visits: brackets, and quote openers (a quote opened inside a bracket runs to
# its own closing mark on the same line, and the brackets in it are quote text).
_PAIRED = re.compile(r"[\[\]()" + "".join(QUOTE_CLOSERS) + "]")

_FILLER_WORDS = frozenset(
    {"see", "also", "cf", "cf.", "e.g.", "e.g.,", "i.e.", "and", "or", "from", "in"}
    | {"source", "sources", "ref", "ref.", "refs", "citation", "citations", "quote", "quoted"}
)
_STRIP = " \t\n*`:—–-[](),.;"


@dataclass(frozen=True)
class Candidate:
    """A handle-looking token at ``[start, end)``; ``glued`` when it ends a longer token."""

    start: int
    end: int
    glued: bool = False


@dataclass(frozen=True)
class Element:
    """One citation inside a unit: the handle's span and the optional quote."""

    handle_start: int
    handle_end: int
    quote: str | None
    raw_start: int
    raw_end: int
    quote_start: int = -1
    error: str | None = None  # set when the markup around the handle cannot be read


@dataclass(frozen=True)
class Unit:
    """Citation markup at ``[start, end)``, replaced by ``replacement`` in the display text."""

    start: int
    end: int
    replacement: str
    elements: tuple[Element, ...]


def find_candidates(text: str) -> list[Candidate]:
    """Every handle-looking token in ``text`` (see the module docstring); linear time."""
    skel = skeleton(text)
    sk = skel.text
    found: list[Candidate] = []
    floor = 0  # where the previous candidate ended (in the skeleton)
    for match in _CANDIDATE.finditer(sk):
        start, end = match.span()
        known, rest = match.group("known"), match.group("rest")
        if known is None and start > floor and not sk[start - 1].isascii():
            # an unknown scheme right after non-ASCII text ("ꓑmid:…" with a homoglyph that maps
            # to nothing): the token starts where the text around it does
            while (
                start > floor and sk[start - 1] not in _STOP_CHARS and not sk[start - 1].isspace()
            ):
                start -= 1
        glued = known is not None and start > 0 and _GLUED.match(sk, start - 1) is not None
        handle_like = rest is not None and ("/" in rest or "~" in rest)
        if known is not None and (known != known.lower() or glued) and not handle_like:
            continue  # "PMID:123" is an ordinary reference, "…/pmid:123" a URL, not handles
        while end > start and sk[end - 1] in _TRAILING:
            end -= 1
        for wrapper in ("__", "_"):  # "__handle__" is bold markup around the handle
            width = len(wrapper)
            if sk[max(0, start - width) : start] == wrapper == sk[max(start, end - width) : end]:
                end -= width
                break
        if end - start > len(known or "") + 1 or match.group("other"):
            found.append(Candidate(*skel.span(start, end), glued=glued))
        floor = match.end()
    return found


def bracket_pairs(text: str, skipped: list[tuple[int, int]] | None = None) -> dict[int, int]:
    """Matching ``[``/``(`` → ``]``/``)`` positions; unmatched brackets are ignored.

    A closer pops openers down to its own kind (dropping unclosed ones above it); a closer
    with no opener of its kind open is skipped. A quote that opens inside a bracket and closes
    (with its own closing mark, :data:`QUOTE_CLOSERS`) on the same line is skipped whole: its
    brackets are quote text, so ``[h "a ] b"]`` is one group; ``skipped`` (when given) gets
    the span of each such quote. Linear time.
    """
    pairs: dict[int, int] = {}
    stack: list[tuple[str, int]] = []
    open_count = {"]": 0, ")": 0}
    closer_of = {"[": "]", "(": ")"}
    line_end = -1
    next_at: dict[str, int] = {}  # closing mark → its next position (line_end: none)
    resume = 0
    for match in _PAIRED.finditer(text):
        index, char = match.start(), match.group()
        if index < resume or (char in QUOTE_CLOSERS and not stack):
            continue
        if char in QUOTE_CLOSERS:
            if index >= line_end:
                line_end = text.find("\n", index)
                line_end = len(text) if line_end < 0 else line_end
            for mark in QUOTE_CLOSERS[char]:
                if next_at.get(mark, -1) <= index:
                    found = text.find(mark, index + 1, line_end)
                    next_at[mark] = line_end if found < 0 else found
            close = min(next_at[mark] for mark in QUOTE_CLOSERS[char])
            if close < line_end:
                resume = close + 1
                if skipped is not None:
                    skipped.append((index, resume))
        elif char in closer_of:
            stack.append((closer_of[char], index))
            open_count[closer_of[char]] += 1
        elif open_count.get(char):
            while True:
                kind, opened = stack.pop()
                open_count[kind] -= 1
                if kind == char:
                    pairs[opened] = index
                    break
    return pairs


def _innermost(candidates: list[Candidate], pairs: dict[int, int]) -> list[int | None]:
    """For each candidate, the opening position of the innermost pair around it (or None)."""
    events = sorted(pairs.items())
    result: list[int | None] = []
    open_stack: list[tuple[int, int]] = []
    next_event = 0
    for cand in candidates:
        while next_event < len(events) and events[next_event][0] < cand.start:
            open_stack.append(events[next_event])
            next_event += 1
        while open_stack and open_stack[-1][1] < cand.end:
            open_stack.pop()
        result.append(open_stack[-1][0] if open_stack else None)
    return result


def closed_quote(text: str, at: int, limit: int) -> int | None:
    """If ``text[at]`` opens a quote that closes before ``limit``, the closer's position."""
    closers = QUOTE_CLOSERS.get(text[at])
    if closers is None:
        return None
    found = [i for i in (text.find(c, at + 1, limit) for c in closers) if i >= 0]
    return min(found) if found else None


class _QuoteFinder:
    """:func:`closed_quote` with memory, so many openers in one region cost linear time.

    If the search from ``at`` found the closer at ``c`` (or none before ``limit``), a search
    for the same closers from any later ``at2 < c`` has the same answer.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.memory: dict[tuple[str, int], tuple[int, int | None]] = {}

    def __call__(self, at: int, limit: int) -> int | None:
        closers = QUOTE_CLOSERS.get(self.text[at])
        if closers is None:
            return None
        known = self.memory.get((closers, limit))
        if known is not None and known[0] < at and (known[1] is None or at < known[1]):
            return known[1]
        found = closed_quote(self.text, at, limit)
        self.memory[(closers, limit)] = (at, found)
        return found


@dataclass
class _Token:
    kind: str  # "handle" | "quote" | "sep" | "text"
    start: int
    end: int


def _tokens(text: str, start: int, end: int, cands: list[Candidate]) -> list[_Token]:
    """Tokenize a group's content: handles (atomic), closed quotes, separators, other text."""
    tokens: list[_Token] = []
    quote_end = _QuoteFinder(text)
    starts = {c.start: c for c in cands}
    next_starts = sorted(starts)
    index = start
    while index < end:
        if index in starts:
            tokens.append(_Token("handle", index, starts[index].end))
            index = starts[index].end
            continue
        limit = next_starts[bisect_left(next_starts, index)] if index < next_starts[-1] else end
        after_handle = bool(tokens) and tokens[-1].kind == "handle" and tokens[-1].end == index
        before = text[index - 1]  # a mark right after a word or a quote opens none
        glued = (before.isalnum() or before in QUOTE_MARKS) and not after_handle
        close = None if glued else quote_end(index, min(limit, end))
        if close is not None:
            tokens.append(_Token("quote", index, close + 1))
            index = close + 1
        elif text[index] in ";,":
            tokens.append(_Token("sep", index, index + 1))
            index += 1
        else:
            if tokens and tokens[-1].kind == "text":
                tokens[-1].end = index + 1
            else:
                tokens.append(_Token("text", index, index + 1))
            index += 1
    return tokens


def _unclosed(text: str, tokens: list[_Token]) -> bool:
    """True when a quote mark outside every closed quote is left in the tokens; quote marks
    right around a handle (``"h"``, a Markdown link title) quote the handle and are not."""
    around: set[int] = set()
    for before, handle, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
        opener = text[before.end - 1]
        if (
            before.kind == after.kind == "text"
            and handle.kind == "handle"
            and text[after.start] in QUOTE_CLOSERS.get(opener, "")
        ):
            around |= {before.end - 1, after.start}
    return any(
        mark.start() not in around
        for t in tokens
        if t.kind == "text"
        for mark in _LEFT_OVER_MARK.finditer(text, t.start, t.end)
    )


def _failed(elements: list[Element], failed: bool) -> list[Element]:
    """The elements, each with :data:`UNCLOSED_QUOTE` as its error when ``failed``."""
    return [replace(e, error=UNCLOSED_QUOTE) for e in elements] if failed else elements


def _element(text: str, handle: _Token, quote: _Token | None) -> Element:
    if quote is None:
        return Element(handle.start, handle.end, None, handle.start, handle.end)
    words = text[quote.start + 1 : quote.end - 1]
    return Element(
        handle.start,
        handle.end,
        words,
        min(handle.start, quote.start),
        max(handle.end, quote.end),
        quote_start=quote.start,
        error=UNCLOSED_QUOTE if _nested(text[quote.start], words) else None,
    )


def _nested(opener: str, words: str) -> bool:
    """True for a quote holding its own opening mark (“a “b” c”): where it ends is unclear."""
    return opener not in QUOTE_CLOSERS[opener] and opener in words


def _pair_up(text: str, tokens: list[_Token]) -> list[Element]:
    """Split tokens at separators; each quote goes to the handle of its element."""
    groups: list[list[_Token]] = [[]]
    for token in tokens:
        if token.kind == "sep":
            groups.append([])
        elif token.kind != "text":
            groups[-1].append(token)
    elements: list[Element] = []
    pending: list[_Token] = []  # quotes of an element without a handle: go to the next one
    for group in groups:
        handles = [t for t in group if t.kind == "handle"]
        quotes = pending + [t for t in group if t.kind == "quote"]
        if not handles:
            pending = quotes
            continue
        pending = []
        given: dict[int, list[_Token]] = {id(h): [] for h in handles}
        handle_starts = [h.start for h in handles]
        for quote in quotes:
            before = bisect_left(handle_starts, quote.start)  # handles before the quote
            given[id(handles[max(0, before - 1)])].append(quote)
        for handle in handles:
            for quote in given[id(handle)] or [None]:
                elements.append(_element(text, handle, quote))
    if pending and elements:  # trailing quotes without a handle: the last handle takes them
        last = elements.pop()
        handle = _Token("handle", last.handle_start, last.handle_end)
        if last.quote is not None:
            elements.append(last)
        elements.extend(_element(text, handle, quote) for quote in pending)
    return elements


def _visible(text: str, start: int, end: int, hidden: list[tuple[int, int]]) -> str:
    """``text[start:end]`` without the ``hidden`` spans (sorted, non-overlapping)."""
    at = max(0, bisect_left(hidden, (start, start)) - 1)
    parts: list[str] = []
    for h_start, h_end in hidden[at:]:
        if h_start >= end:
            break
        if h_end > start:
            parts.append(text[start:h_start])
            start = max(start, h_end)
    parts.append(text[start:end])
    return "".join(parts)


def _leftover(text: str, tokens: list[_Token], hidden: list[tuple[int, int]]) -> str:
    """Prose inside a citation group that is not citation markup (kept in the display text).

    Filler words ("see", "cf.", "and", …), broken quotes and ``hidden`` spans (footnote
    markers, cited on their own) are not kept.
    """
    parts: list[str] = []
    for token in tokens:
        if token.kind != "text":
            continue
        piece = _visible(text, token.start, token.end, hidden).strip(_STRIP)
        if not piece or piece[0] in QUOTE_CLOSERS:
            continue
        if all(word.lower() in _FILLER_WORDS for word in piece.split()):
            continue
        if any(c.isalnum() for c in piece):
            parts.append(piece)
    return "; ".join(parts)


def _group_unit(
    text: str,
    start: int,
    end: int,
    cands: list[Candidate],
    pairs: dict[int, int],
    hidden: list[tuple[int, int]],
) -> Unit:
    """A group ``[…]``/``(…)`` (or a link with handles in its text) spanning ``[start, end]``."""
    tokens = _tokens(text, start + 1, end, cands)
    elements = _failed(_pair_up(text, tokens), _unclosed(text, tokens))
    text_close = pairs[start]
    # "[handle](url)": only the bracketed part can hold prose worth keeping.
    leftover = _leftover(text, [t for t in tokens if t.end <= text_close], hidden)
    close_char = text[text_close]
    replacement = f"{text[start]}{leftover}{close_char}" if leftover else ""
    return Unit(start, end + 1, replacement, tuple(elements))


def _link_unit(
    text: str,
    start: int,
    end: int,
    cands: list[Candidate],
    pairs: dict[int, int],
    hidden: list[tuple[int, int]],
) -> Unit:
    """``[link text](handle)``: the link text stays (without ``hidden`` spans); a wholly
    quoted link text is the quote."""
    text_close = pairs[start]
    link_text = text[start + 1 : text_close]
    tokens = _tokens(text, text_close + 2, end, cands)
    elements = _failed(_pair_up(text, tokens), _unclosed(text, tokens))
    stripped = link_text.strip()
    wholly = closed_quote(stripped, 0, len(stripped)) == len(stripped) - 1 if stripped else False
    at_both_ends = len(stripped) > 1 and stripped[-1] in QUOTE_CLOSERS.get(stripped[0], "")
    if at_both_ends and (not wholly or _nested(stripped[0], stripped[1:-1])):
        elements = _failed(elements, True)  # ["a" b"](h), [“a “b” c”](h): not one quote
    elif wholly:
        quote_start = start + 1 + link_text.index(stripped[0])
        elements = [
            replace(
                e, quote=stripped[1:-1], raw_start=start, raw_end=end + 1, quote_start=quote_start
            )
            if e.quote is None
            else e
            for e in elements
        ]
    return Unit(start, end + 1, _visible(text, start + 1, text_close, hidden), tuple(elements))


def _wrapped(text: str, cand: Candidate) -> tuple[int, int]:
    """Widen a bare candidate over matching ``**``, ``__`` or backtick wrappers."""
    start, end = cand.start, cand.end
    for wrapper in ("**", "__", "`", "*", "_"):
        width = len(wrapper)
        if text[max(0, start - width) : start] == wrapper and text[end : end + width] == wrapper:
            start, end = start - width, end + width
    return start, end


def _bare_unit(text: str, cand: Candidate, limit: int, pairs: dict[int, int]) -> Unit:
    """A bare handle; a closed quote after a space or ':' (before ``limit``) is its quote.

    A glued handle (the end of a URL, say) is cited and stays in the display text. A handle
    right after a ``[``/``(`` that never closes (``[h "a"["]``) is in a group that cannot be
    read: malformed."""
    if cand.glued:
        element = Element(cand.start, cand.end, None, cand.start, cand.end)
        return Unit(cand.start, cand.end, text[cand.start : cand.end], (element,))
    start, end = _wrapped(text, cand)
    after = end
    while after < limit and text[after] in " \t:":
        after += 1
    close = closed_quote(text, after, limit) if end < after < limit else None
    handle = _Token("handle", cand.start, cand.end)
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    unclosed_group = before > 0 and text[before - 1] in "[(" and before - 1 not in pairs
    if close is not None:
        quote = _Token("quote", after, close + 1)
        element = _element(text, handle, quote)
        end = close + 1
    else:
        element = _element(text, handle, None)
    if unclosed_group or (close is None and end < after < limit and text[after] in QUOTE_CLOSERS):
        element = replace(element, error=UNCLOSED_QUOTE)  # "h "unclosed…": not unquoted
    return Unit(start, end, "", (element,))


def _root(
    text: str, open_at: int, pairs: dict[int, int], closes: dict[int, int]
) -> tuple[int, int]:
    """The span ``[start, end]`` of the markup around a pair: the pair, or the whole link."""
    close_at = pairs[open_at]
    if text[open_at] == "(" and open_at > 0:
        text_open = closes.get(open_at - 1)
        if text_open is not None and text[text_open] == "[":
            return text_open, close_at
    if text[open_at] == "[" and pairs.get(close_at + 1) is not None:
        return open_at, pairs[close_at + 1]
    return open_at, close_at


def _roots(
    text: str, cands: list[Candidate], pairs: dict[int, int]
) -> tuple[list[Candidate], dict[tuple[int, int], list[Candidate]]]:
    """Bare candidates, and the candidates of each outermost markup span that holds some."""
    closes = {close: open_ for open_, close in pairs.items()}
    bare: list[Candidate] = []
    spans: dict[tuple[int, int], list[Candidate]] = {}
    for cand, owner in zip(cands, _innermost(cands, pairs), strict=True):
        if owner is None:
            bare.append(cand)
        else:
            spans.setdefault(_root(text, owner, pairs, closes), []).append(cand)
    merged: dict[tuple[int, int], list[Candidate]] = {}
    outer: tuple[int, int] | None = None
    for span in sorted(spans, key=lambda s: (s[0], -s[1])):
        if outer is not None and span[1] <= outer[1]:  # nested in a span that holds handles
            merged[outer].extend(spans[span])
        else:
            outer = span
            merged[outer] = list(spans[span])
    for members in merged.values():
        members.sort(key=lambda c: c.start)
    return bare, merged


def find_units(text: str, hidden: list[tuple[int, int]] | None = None) -> list[Unit]:
    """All citation units in ``text``, in order, non-overlapping; every candidate is the
    handle of at least one element. ``hidden`` spans (sorted, non-overlapping: footnote
    markers) never stay in a unit's display text."""
    hidden = hidden or []
    cands = find_candidates(text)
    if not cands:
        return []
    skipped: list[tuple[int, int]] = []
    pairs = bracket_pairs(text, skipped)
    bare, spans = _roots(text, cands, pairs)
    units: list[Unit] = []
    for (start, end), members in spans.items():
        is_link = text[start] == "[" and pairs[start] != end
        link_text_has_handle = any(c.start < pairs[start] for c in members)
        if is_link and not link_text_has_handle:
            units.append(_link_unit(text, start, end, members, pairs, hidden))
        else:
            units.append(_group_unit(text, start, end, members, pairs, hidden))
    span_starts = sorted(start for start, _ in spans)
    cand_starts = [c.start for c in cands]
    for cand in bare:
        at = bisect_left(cand_starts, cand.end)
        limit = cand_starts[at] if at < len(cand_starts) else len(text)
        at = bisect_left(span_starts, cand.end)
        if at < len(span_starts):
            limit = min(limit, span_starts[at])
        units.append(_bare_unit(text, cand, limit, pairs))
    units.sort(key=lambda unit: unit.start)
    return _runaway(text, units, pairs, skipped)


_RUN_ON = re.compile("[" + "".join(sorted(QUOTE_MARKS)) + r"][\])]")  # a mark, then a closer


def _runaway(
    text: str, units: list[Unit], pairs: dict[int, int], skipped: list[tuple[int, int]]
) -> list[Unit]:
    """The units, malformed on a line that also holds, outside them and outside the quotes
    :func:`bracket_pairs` skipped, a quote mark right before a ``]`` or ``)`` that closes
    nothing (``[h “a”] b”]``): a quote may have run past its group there."""
    closed = set(pairs.values())
    starts = [u.start for u in units]
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines: set[int] = set()
    for match in _RUN_ON.finditer(text):
        at = match.end() - 1
        inside = bisect_left(starts, at + 1) - 1
        quote = bisect_right(skipped, at, key=lambda span: span[0]) - 1  # sorted, disjoint
        if (
            at in closed
            or (quote >= 0 and at < skipped[quote][1])
            or (inside >= 0 and at < units[inside].end)
        ):
            continue
        lines.add(bisect_right(line_starts, at))
    if not lines:
        return units
    return [
        replace(u, elements=tuple(_failed(list(u.elements), True)))
        if bisect_right(line_starts, u.start) in lines
        else u
        for u in units
    ]
