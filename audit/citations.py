"""Citations in answers: find them, split the answer into sentences, attach each citation.

Supported styles (docs/contract.md has examples of each):

- groups ``[h]``, ``[h "quote"]``, ``[h1; h2]``, ``[h1, h2 "quote"]``, ``(h)``, ``(HR 0.8; h)``
  — quotes in straight or curly double quotes (``"…"``, ``“…”``, ``„…“``, ``«…»``);
- bare handles, optionally in ``**bold**``, ``__bold__`` or a ```code span```, optionally
  followed by a space or ``:`` and a quote;
- Markdown links ``[text](h)`` (a wholly quoted link text is the quote);
- numbered footnotes ``[1]``, ``[^1]``, ``[1, 2]``, ``[1-3]``, ``[^note]`` resolved through
  a reference list: definition lines ``[1]: h "quote"`` / ``[^1]: h`` anywhere, or a
  ``References``/``Sources``/``Citations``/``Bibliography``/``Notes`` heading followed by
  entries ``1. h``, ``[1] h`` or ``- [1] h``. Used entries are not audited as sentences;
  an entry that no marker cites is audited as a list item, so no handle is ever dropped; an
  entry without a handle (an ordinary URL or reference) is not a citation;
- structured claims JSON (:func:`audit.claims.parse_claims`).

Anything handle-shaped that breaks the grammar is a :class:`Citation` with ``handle=None`` and
``error`` set; a marker pointing to no entry of an existing reference list likewise; so is a
handle written with look-alike or invisible characters (:mod:`audit.lookalikes`). A citation
group placed after a sentence's full stop belongs to that sentence. A footnote marker resolves
wherever it stands, inside a citation group or a quote too.

**No handle is ever dropped.** After the structured parse, :func:`parse_answer` sweeps the
whole answer — every line: fence lines and their info strings, HTML, link targets and titles,
reference entries — for handle-looking text (:func:`audit.citation_scan.find_candidates`).
Each span that no citation came from becomes a citation of a sentence made of its line, as
written; a reference entry whose markers all went unresolved is audited as a list item. So
every handle-looking span is the source of a citation (``handle_span``), and of exactly one
unless it is written to be cited more than once (a footnote cited by two markers, ``[h "q1",
"q2"]``).

**Nothing to audit** is an error, never a pass: an answer without a sentence (headings and
lead-ins alone are not claims) and without a citation raises :class:`NothingToAudit`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from audit.citation_scan import Element, Unit, find_candidates, find_units
from audit.errors import CitationSyntaxError, InputError, LimitExceeded, NothingToAudit
from audit.handles import Handle, parse_handle
from audit.lookalikes import require_plain
from audit.sentences import Block, clean, lead_in_end, sentence_spans, split_blocks

MAX_ANSWER_CHARS = 200_000
MAX_CITATIONS_PER_SENTENCE = 50
MAX_QUOTE_CHARS = 2_000
SENTENCE_KINDS = ("sentence", "heading", "list_item", "lead_in")
"""The kinds a claims JSON may name; an answer's reference section also gives
``reference_entry`` sentences (:mod:`audit.sentences`), which only the splitter makes."""


@dataclass(frozen=True)
class Citation:
    """One cited handle (with its optional quote) as written in the answer.

    ``start``/``end`` is the citation's span in the answer; for a footnote it is the marker's
    span while ``raw`` is the reference entry. ``handle_span`` is the span of the handle text
    in the answer (in the reference entry for a footnote); None for a footnote that names no
    entry. Claims JSON has no spans (0, 0, None).
    """

    raw: str
    handle_text: str
    handle: Handle | None
    quote: str | None
    error: str | None
    start: int
    end: int
    handle_span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Sentence:
    """A sentence of the answer (1-based ``index``) with its citations."""

    index: int
    text: str
    kind: str  # "sentence" | "heading" | "list_item" | "lead_in" | "reference_entry"
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class ParsedAnswer:
    """The answer as sentences with citations attached."""

    sentences: tuple[Sentence, ...]

    @property
    def citations(self) -> tuple[Citation, ...]:
        """Every citation, in sentence order."""
        return tuple(c for s in self.sentences for c in s.citations)


def check_quote(quote: str | None, at: int) -> None:
    """Raise :class:`LimitExceeded` for a quote over :data:`MAX_QUOTE_CHARS`."""
    if quote is not None and len(quote) > MAX_QUOTE_CHARS:
        raise LimitExceeded(
            f"quote at character {at} is {len(quote):,} characters long (limit {MAX_QUOTE_CHARS:,})"
        )


def make_citation(
    raw: str,
    handle_text: str,
    quote: str | None,
    start: int,
    end: int,
    handle_span: tuple[int, int] | None = None,
    markup_error: str | None = None,
) -> Citation:
    """A citation, parsed: ``handle`` set when the handle is plain ASCII without markup and
    parses, else ``error`` (the look-alike, markup or grammar message). A ``markup_error``
    (the quote around it cannot be read) makes a handle that parses malformed too."""
    try:
        require_plain(handle_text)
        handle: Handle | None = parse_handle(handle_text)
        error = markup_error
    except CitationSyntaxError as failure:
        handle, error = None, failure.message
    if error is not None:
        handle = None
    return Citation(raw, handle_text, handle, quote, error, start, end, handle_span)


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> tuple[int, str] | None:
    """The position and escape (``\\ud800``) of the first lone surrogate in ``text``, or None.

    Such a string is not valid Unicode: it could be neither rendered nor written as UTF-8.
    (A ``str`` holds a surrogate pair as one character, so any surrogate in it is lone.)"""
    if text.isascii() or (found := _SURROGATE.search(text)) is None:
        return None
    return found.start(), ascii(found.group())[1:-1]


def _refuse_surrogates(text: str, what: str) -> None:
    """Raise :class:`InputError` when ``text`` holds a lone surrogate."""
    if (found := lone_surrogate(text)) is not None:
        at, escape = found
        raise InputError(
            f"{what} holds a lone surrogate ({escape}) at character {at}, which is not valid "
            "Unicode"
        )


# ---------------------------------------------------------------------------------------------
# Reference lists.

_QUOTE_PREFIX = re.compile(r"[ ]{0,3}(?:>[ ]?)*")  # blockquote markers before an entry
_DEFINITION = re.compile(r"[ ]{0,3}\[\^?([A-Za-z0-9_-]{1,20})\]:[ \t]*")
_REF_HEADING = re.compile(
    r"[ ]{0,3}(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*"
    r"(?:references|sources|citations|bibliography|works cited|footnotes|notes)"
    r"[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.IGNORECASE,
)
_ENTRY = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?(?:\[\^?(?P<a>[A-Za-z0-9_-]{1,20})\]:?|(?P<b>\d{1,4})[.)])[ \t]+"
)
_MARKER = re.compile(
    r"\[\^?(?P<nums>\d{1,4}(?:[ \t]*[,–-][ \t]*\d{1,4})*)\](?![:(])"
    r"|\[\^(?P<name>[A-Za-z0-9_-]{1,20})\](?![:(])"
)


def _quote_prefix_end(line: str) -> int:
    """Where a line's content starts after its blockquote markers (0 without any)."""
    match = _QUOTE_PREFIX.match(line)
    return match.end() if match else 0


def _label(text: str) -> str:
    return str(int(text)) if text.isdigit() else text


@dataclass
class _Entry:
    label: str
    line_start: int
    content_start: int
    content_end: int
    elements: list[tuple[Element, str]] = field(default_factory=list)  # element, entry text
    _parsed: list[Citation] | None = None

    def parsed(self) -> list[Citation]:
        """The entry's citations, parsed once (spans in the answer)."""
        if self._parsed is None:
            base = self.content_start
            self._parsed = [
                make_citation(
                    content[e.raw_start : e.raw_end],
                    content[e.handle_start : e.handle_end],
                    e.quote,
                    base + e.raw_start,
                    base + e.raw_end,
                    (base + e.handle_start, base + e.handle_end),
                    e.error,
                )
                for e, content in self.elements
            ]
        return self._parsed


@dataclass
class _References:
    skip: set[int] = field(default_factory=set)  # line starts not audited as sentences
    entries: dict[str, _Entry] = field(default_factory=dict)
    unused: list[_Entry] = field(default_factory=list)  # entries no marker cites
    resolved: set[str] = field(default_factory=set)  # labels a marker in a block resolved


def _lines(answer: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    at = 0
    for raw in answer.splitlines(keepends=True):
        out.append((at, raw.rstrip("\r\n")))
        at += len(raw)
    return out


def _candidate_entries(lines: list[tuple[int, str]]) -> tuple[list[_Entry], set[int]]:
    """Definition lines anywhere, and entries under a reference heading (with its line); in
    a blockquote too."""
    entries: list[_Entry] = []
    headings: set[int] = set()
    index = 0
    while index < len(lines):
        at, line = lines[index]
        skip = _quote_prefix_end(line)
        if match := _DEFINITION.match(line, skip):
            entries.append(_Entry(_label(match.group(1)), at, at + match.end(), at + len(line)))
        elif _REF_HEADING.match(line, skip):
            found: list[_Entry] = []
            follow = index + 1
            while follow < len(lines):
                f_at, f_line = lines[follow]
                f_skip = _quote_prefix_end(f_line)
                if match := _ENTRY.match(f_line, f_skip):
                    label = _label(match.group("a") or match.group("b"))
                    found.append(_Entry(label, f_at, f_at + match.end(), f_at + len(f_line)))
                elif f_line[f_skip:].strip():
                    break
                follow += 1
            if found:
                headings.add(at)
                entries.extend(found)
                index = follow - 1
        index += 1
    return entries, headings


def _marker_labels(match: re.Match[str]) -> list[str]:
    """The labels a footnote marker names: ``[1, 3-5]`` → 1, 3, 4, 5."""
    if match.group("name"):
        return [match.group("name")]
    labels: list[str] = []
    for part in re.split(r"[ \t]*,[ \t]*", match.group("nums")):
        bounds = re.split(r"[ \t]*[–-][ \t]*", part)
        low, high = int(bounds[0]), int(bounds[-1])
        if high - low >= MAX_CITATIONS_PER_SENTENCE:
            raise LimitExceeded(
                f"footnote range {match.group()} names {high - low + 1} references "
                f"(limit {MAX_CITATIONS_PER_SENTENCE})"
            )
        labels.extend(str(n) for n in range(low, max(low, high) + 1))
    return labels


def _find_references(answer: str) -> _References:
    lines = _lines(answer)
    entries, headings = _candidate_entries(lines)
    if not entries:
        return _References()
    entry_lines = {e.line_start for e in entries} | headings
    used: set[str] = set()
    for at, line in lines:
        if at not in entry_lines:
            used.update(label for m in _MARKER.finditer(line) for label in _marker_labels(m))
    refs = _References()
    for entry in entries:
        content = answer[entry.content_start : entry.content_end]
        for unit in find_units(content):
            for element in unit.elements:
                check_quote(element.quote, entry.content_start + max(element.quote_start, 0))
                entry.elements.append((element, content))
        if entry.label in used and entry.label not in refs.entries:
            refs.entries[entry.label] = entry
            refs.skip.add(entry.line_start)
        else:
            refs.skip.add(entry.line_start)
            if entry.elements:  # a plain reference nobody cites is not a claim
                refs.unused.append(entry)
    if refs.entries:
        refs.skip |= headings
    else:  # nothing cites the list: it is ordinary text after all
        return _References()
    return refs


def _footnote_citations(refs: _References, match: re.Match[str], start: int) -> list[Citation]:
    citations: list[Citation] = []
    end = start + len(match.group())
    for label in _marker_labels(match):
        entry = refs.entries.get(label)
        if entry is None:
            citations.append(
                Citation(
                    match.group(),
                    "",
                    None,
                    None,
                    f"footnote [{label}] has no entry in the reference list",
                    start,
                    end,
                )
            )
            continue
        refs.resolved.add(label)
        citations.extend(replace(c, start=start, end=end) for c in entry.parsed())
    return citations


# ---------------------------------------------------------------------------------------------
# Blocks → sentences.


@dataclass
class _Piece:
    """Citation markup in a block: its span, its display replacement and its citations."""

    start: int
    end: int
    replacement: str
    citations: list[Citation]
    worded: bool = False
    """Its replacement is words the sentence says (a link's text, a glued handle), not a
    group's kept remark: its citations belong where those words end."""


def _worded(unit: Unit, text: str) -> bool:
    """``[link text](handle)`` (the only unit that opens with ``[`` and closes with ``)``) or a
    handle shown as written (glued to a URL)."""
    link = text[unit.start] == "[" and text[unit.end - 1] == ")"
    return bool(unit.replacement) and (link or unit.replacement == text[unit.start : unit.end])


def _pieces(block: Block, text: str, refs: _References) -> list[_Piece]:
    """The block's citation markup; a footnote marker inside a unit (a group, a quote, a
    link text) adds its citations to the unit's and leaves the unit's display text."""
    markers = list(_MARKER.finditer(text)) if refs.entries else []
    pieces: list[_Piece] = []
    for unit in find_units(text, [m.span() for m in markers]):
        citations: list[Citation] = []
        for element in unit.elements:
            start = block.to_answer(element.raw_start)
            check_quote(element.quote, block.to_answer(max(element.quote_start, 0)))
            citations.append(
                make_citation(
                    text[element.raw_start : element.raw_end],
                    text[element.handle_start : element.handle_end],
                    element.quote,
                    start,
                    block.to_answer(element.raw_end),
                    (block.to_answer(element.handle_start), block.to_answer(element.handle_end)),
                    element.error,
                )
            )
        pieces.append(
            _Piece(unit.start, unit.end, unit.replacement, citations, _worded(unit, text))
        )
    taken_starts = [p.start for p in pieces]  # sorted, non-overlapping
    units = len(pieces)
    for match in markers:
        cites = _footnote_citations(refs, match, block.to_answer(match.start()))
        at = bisect_right(taken_starts, match.end() - 1) - 1  # the last unit starting before
        if at >= 0 and match.start() < pieces[at].end:  # the marker ends: it holds the marker
            pieces[at].citations.extend(cites)
            pieces[at].citations.sort(key=lambda c: c.start)
        else:
            pieces.append(_Piece(match.start(), match.end(), "", cites))
    if len(pieces) > units:
        pieces.sort(key=lambda p: p.start)
    return pieces


@dataclass
class _Draft:
    text: str
    kind: str
    citations: list[Citation]


_KIND_OF_BLOCK = {
    "heading": "heading",
    "list_item": "list_item",
    "reference_entry": "reference_entry",
}
_WHOLE_BLOCKS = ("heading", "table_row", "reference_entry")  # one sentence per block


def _block_drafts(
    block: Block, answer: str, refs: _References
) -> tuple[list[_Draft], list[Citation]]:
    """The block's sentences, and the citations that belong to the sentence before the block."""
    text = block.text(answer)
    display_parts: list[str] = []
    anchors: list[tuple[int, list[Citation]]] = []
    position = length = 0
    for piece in _pieces(block, text, refs):
        display_parts.append(text[position : piece.start])
        length += piece.start - position
        display_parts.append(piece.replacement)
        length += len(piece.replacement)
        anchors.append(
            (length if piece.worded else length - len(piece.replacement), piece.citations)
        )
        position = piece.end
    display_parts.append(text[position:])
    display = "".join(display_parts)

    if block.kind == "table_row" or (block.kind == "heading" and "|" in display):
        display = " | ".join(cell.strip() for cell in display.split("|") if cell.strip())
    kind = _KIND_OF_BLOCK.get(block.kind, "sentence")
    spans: list[tuple[int, int]]
    kinds: list[str]
    if block.kind in _WHOLE_BLOCKS:
        spans, kinds = [(0, len(display))], [kind]
    else:
        lead = lead_in_end(display)
        spans = ([(0, lead)] if lead else []) + sentence_spans(display, lead or 0)
        kinds = (["lead_in"] if lead else []) + [kind] * (len(spans) - (1 if lead else 0))
    drafts = [_Draft(clean(display[s:e]), k, []) for (s, e), k in zip(spans, kinds, strict=True)]
    before: list[Citation] = []
    starts = [s for s, _ in spans]
    for anchor, citations in anchors:
        if not drafts:
            before.extend(citations)
            continue
        index = max(0, bisect_right(starts, anchor) - 1)
        if (
            index > 0
            and kinds[index - 1] != "lead_in"
            and not display[starts[index] : anchor].strip()
        ):
            index -= 1  # a group after the full stop belongs to the sentence it follows
        drafts[index].citations.extend(citations)
    if block.kind in ("list_item", "reference_entry") and not any(d.text for d in drafts):
        # a list item (or reference entry) is its own sentence even when it is only a
        # citation: show it as written
        everything = before + [c for d in drafts for c in d.citations]
        return [_Draft(clean(text), kind, everything)], []
    kept: list[_Draft] = []
    for draft in drafts:  # a sentence that is only citations gives them to the one before
        if draft.text:
            kept.append(draft)
        elif kept:
            kept[-1].citations.extend(draft.citations)
        else:
            before.extend(draft.citations)
    return kept, before


def _finish(drafts: list[_Draft]) -> ParsedAnswer:
    sentences: list[Sentence] = []
    for index, draft in enumerate(drafts, start=1):
        if len(draft.citations) > MAX_CITATIONS_PER_SENTENCE:
            raise LimitExceeded(
                f"sentence {index} has {len(draft.citations)} citations "
                f"(limit {MAX_CITATIONS_PER_SENTENCE})"
            )
        sentences.append(Sentence(index, draft.text, draft.kind, tuple(draft.citations)))
    return ParsedAnswer(tuple(sentences))


def assemble(sentences: list[tuple[str, str, list[Citation]]]) -> ParsedAnswer:
    """A parsed answer from (text, kind, citations) triples, numbered from 1, with the
    per-sentence citation limit checked (used for structured claims)."""
    return _finish([_Draft(text, kind, citations) for text, kind, citations in sentences])


def _unused_entry_draft(entry: _Entry, answer: str) -> _Draft:
    """A reference entry that no marker cites, audited as a list item (text as written)."""
    text = clean(answer[entry.content_start : entry.content_end])
    return _Draft(text, "list_item", list(entry.parsed()))


_Item = tuple[int, list[_Draft], list[Citation]]  # answer offset, drafts, citations before


def _swept(answer: str, items: list[_Item]) -> list[_Item]:
    """The sweep: a sentence per line for the handle-looking spans no citation came from."""
    covered = sorted(
        c.handle_span
        for _, drafts, before in items
        for c in [*before, *(c for d in drafts for c in d.citations)]
        if c.handle_span is not None
    )
    starts = [start for start, _ in covered]
    reach: list[int] = []  # reach[i]: the furthest end of covered[0..i]
    for _, end in covered:
        reach.append(max(end, reach[-1]) if reach else end)
    orphans: list[Citation] = []
    for cand in find_candidates(answer):
        at = bisect_right(starts, cand.end - 1) - 1  # covered spans starting before its end
        if at < 0 or reach[at] <= cand.start:
            written = answer[cand.start : cand.end]
            span = (cand.start, cand.end)
            orphans.append(make_citation(written, written, None, *span, span))
    if not orphans:
        return []
    lines = _lines(answer)
    line_starts = [at for at, _ in lines]
    by_line: dict[int, list[Citation]] = {}
    for citation in orphans:
        by_line.setdefault(bisect_right(line_starts, citation.start) - 1, []).append(citation)
    return [
        (lines[line][0], [_Draft(clean(lines[line][1]), "sentence", cites)], [])
        for line, cites in by_line.items()
    ]


def something_to_audit(sentences: Iterable[tuple[str, str, Sequence[Citation]]]) -> bool:
    """True when a (text, kind, citations) holds a citation or is a claim: a sentence or a list
    item with text (headings and lead-ins without citations are not claims)."""
    return any(
        cites or (text and kind in ("sentence", "list_item")) for text, kind, cites in sentences
    )


def parse_answer(text: str) -> ParsedAnswer:
    """Split a Markdown/plain-text answer into sentences with their citations.

    Raises :class:`LimitExceeded` past the documented limits, :class:`NothingToAudit` for an
    answer without a sentence or a citation; never anything but an :class:`InputError` on
    any text.
    """
    if len(text) > MAX_ANSWER_CHARS:
        raise LimitExceeded(f"answer is {len(text):,} characters long (limit {MAX_ANSWER_CHARS:,})")
    _refuse_surrogates(text, "answer")
    refs = _find_references(text)
    items: list[_Item] = []
    for block in split_blocks(text, frozenset(refs.skip)):
        block_drafts, before = _block_drafts(block, text, refs)
        items.append((block.segments[0][0], block_drafts, before))
    unresolved = [e for e in refs.entries.values() if e.label not in refs.resolved]
    for entry in refs.unused + unresolved:  # no handle of a reference list is dropped
        items.append((entry.content_start, [_unused_entry_draft(entry, text)], []))
    items += _swept(text, items)
    items.sort(key=lambda item: item[0])
    drafts: list[_Draft] = []
    pending: list[Citation] = []
    for _, block_drafts, before in items:
        if drafts:
            drafts[-1].citations.extend(before)
        else:
            pending.extend(before)
        if block_drafts and pending:
            block_drafts[0].citations[:0] = pending
            pending = []
        drafts.extend(block_drafts)
    if pending:
        drafts.append(_Draft("", "sentence", pending))
    if not something_to_audit((d.text, d.kind, d.citations) for d in drafts):
        if not text.strip():
            what = "is empty"
        elif any(d.kind == "reference_entry" and d.text for d in drafts):
            what = "holds only a reference list (citeseal check checks one)"
        else:
            what = "has no sentence and no citation"
        raise NothingToAudit(f"nothing to audit: the answer {what}")
    return _finish(drafts)
