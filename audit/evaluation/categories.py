"""The planted categories: what each plants, and the outcome it means to plant.

This module holds the case model and the quote categories (genuine variants, one-detail
misquotes); :mod:`audit.evaluation.handle_cases` the handle and record ones (forged,
malformed, withdrawn, unavailable, flags); :mod:`audit.evaluation.catalogue` lists them all.

Each :class:`Category` turns a :class:`Ctx` (a world, a seeded random source, the keyring
handles are minted with) into candidate cases; the planter (:func:`plant`) keeps a candidate
only when the oracle's outcome for it is the category's intent, so a category never scores
something other than what its name says (a candidate whose misquote happens to be verbatim
elsewhere is dropped, not scored). Candidates of the one-character categories are taken round
robin over the characters, so the first N cases cover N different characters.

Handles are minted with the public minting API (:func:`audit.handles.mint`), as a user would.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, pairwise, zip_longest

from audit.evaluation import oracle
from audit.evaluation.oracle_references import Entry
from audit.evaluation.world import (
    INVISIBLES,
    NO_BREAKS,
    Rec,
    World,
)
from audit.handles import Locator, mint
from audit.keys import Keyring

OTHER_KEY = b"another installation's key: evaluation only, not secret"


@dataclass(frozen=True)
class Cite:
    handle: str
    quote: str | None = None


@dataclass(frozen=True)
class Case:
    """One planted sentence: its citations, and how it may be written.

    ``literal``: the answer text itself, for the categories about markup (None: rendered in
    each citation style); ``claims``: whether it is also scored as structured claims."""

    category: str
    cites: tuple[Cite, ...]
    literal: str | None = None
    claims: bool = True
    lead_in: str | None = None
    alone: bool = False  # only in an answer of its own (a reference list elsewhere changes it)
    prose: str | None = None  # the sentence as written, without its full stop (None: standard)
    support: bool = False  # judged for claim support (the claim is the sentence)
    references: tuple[Entry, ...] = ()  # the ordinary references its literal text holds
    down: bool = False  # its references are looked up while the resolver is down

    @property
    def key(self) -> tuple[object, ...]:
        return (self.cites, self.literal, self.prose, self.down)


@dataclass
class Ctx:
    world: World
    rng: random.Random
    keyring: Keyring
    key: bytes
    other: Keyring = field(default_factory=lambda: Keyring([OTHER_KEY]))

    def handle(
        self, rec_id: str, path: str, version: str | None = None, keyring: Keyring | None = None
    ) -> str:
        scheme, _, ident = rec_id.partition(":")
        return mint(keyring or self.keyring, Locator(scheme, ident, path, version))

    def pin(self, rec: Rec, version: str | None = None) -> str | None:
        """The version a handle of ``rec`` is minted with (pinned schemes only)."""
        if rec.scheme in ("nct", "setid", "ppr", "local"):
            return version or rec.current
        return None

    def passages(self, current_only: bool = True) -> list[tuple[Rec, str, str, str]]:
        """(record, version, path, text) of the world's passages, current versions by
        default, records not withdrawn."""
        out = []
        for rec in self.world.records.values():
            if rec.withdrawn:
                continue
            for version, texts in rec.versions.items():
                if current_only and version != rec.current:
                    continue
                out.extend((rec, version, p, t) for p, t in texts.items() if t)
        return out


Intent = tuple[str, ...]


@dataclass(frozen=True)
class Category:
    name: str
    group: str
    intent: Intent  # the verdict of each citation
    build: Callable[[Ctx], Iterable[Case]]
    flag: str | None = None  # a flag the first citation must carry
    against: str | None = None  # the first citation's checked_against
    about: str = ""
    support: str | None = None  # the first citation's support label
    tier: str | None = None  # the first reference's tier
    ref_flag: int | None = None  # which of its flags must be True (None: none may be)


# --- helpers --------------------------------------------------------------------------------


def window(text: str, start: int, end: int, rng: random.Random) -> tuple[int, int]:
    """Grow ``[start, end)`` to whole words (ASCII spaces) plus 1–3 words on each side."""
    words_before, words_after = rng.randint(1, 3), rng.randint(1, 3)
    lo, hi = start, end
    for _ in range(words_before):
        lo = text.rfind(" ", 0, max(lo - 1, 0))
        if lo < 0:
            lo = 0
            break
    lo = lo + 1 if lo > 0 else 0
    for _ in range(words_after):
        nxt = text.find(" ", hi + 1)
        if nxt < 0:
            hi = len(text)
            break
        hi = nxt
    return lo, hi


def quoted(ctx: Ctx, rec: Rec, version: str, path: str, quote: str, cat: str) -> Case:
    return Case(cat, (Cite(ctx.handle(rec.record_id, path, ctx.pin(rec, version)), quote),))


def _around(ctx: Ctx, chars: str, current_only: bool = True) -> dict[str, list[tuple]]:
    """For each character, the (record, version, path, text, index) where it occurs."""
    found: dict[str, list[tuple]] = {c: [] for c in chars}
    for rec, version, path, text in ctx.passages(current_only):
        for i, c in enumerate(text):
            if c in found:
                found[c].append((rec, version, path, text, i))
    return found


def round_robin(rng: random.Random, groups: Iterable[list[Case]]) -> Iterator[Case]:
    """Shuffle each group, then take one of each in turn."""
    lists = [g[:] for g in groups]
    for g in lists:
        rng.shuffle(g)
    for row in zip_longest(*lists):
        yield from (c for c in row if c is not None)


def replace_at(text: str, i: int, new: str) -> str:
    return text[:i] + new + text[i + 1 :]


# --- genuine quotes ---------------------------------------------------------------------------


def verbatim(ctx: Ctx) -> list[Case]:
    out = []
    for rec, version, path, text in ctx.passages():
        for _ in range(3):
            i = ctx.rng.randrange(len(text))
            lo, hi = window(text, i, i + 1, ctx.rng)
            out.append(quoted(ctx, rec, version, path, text[lo:hi], "verbatim"))
    ctx.rng.shuffle(out)
    return out


def variant(cat: str, marks: str, plain: str, *, in_quote: bool) -> Callable[[Ctx], Iterator[Case]]:
    """Genuine quotes written with another character of one fold class.

    ``in_quote``: the quote writes each of ``marks`` where the passage has another member of
    the class (``plain`` included); else the passage has the mark and the quote ``plain``."""

    def build(ctx: Ctx) -> Iterator[Case]:
        members = marks + plain
        found = _around(ctx, members)
        groups = []
        for mark in marks:
            cases = []
            sites = (
                chain.from_iterable(found[m] for m in members if m != mark)
                if in_quote
                else found[mark]
            )
            for rec, version, path, text, i in sites:
                lo, hi = window(text, i, i + 1, ctx.rng)
                quote = replace_at(text, i, mark if in_quote else plain)[lo:hi]
                cases.append(quoted(ctx, rec, version, path, quote, cat))
            groups.append(cases)
        return round_robin(ctx.rng, groups)

    return build


UNICODE_SPACES = NO_BREAKS + "\u2009\u2002\u2003\u2005\u200a\u205f\u3000"


def spaces_in_quote(ctx: Ctx) -> Iterator[Case]:
    """An ASCII space of the passage written as a no-break, thin or other Unicode space."""
    found = _around(ctx, " ")[" "]
    groups = []
    for space in UNICODE_SPACES:
        cases = []
        for rec, version, path, text, i in found:
            lo, hi = window(text, i, i + 1, ctx.rng)
            cases.append(
                quoted(
                    ctx,
                    rec,
                    version,
                    path,
                    replace_at(text, i, space)[lo:hi],
                    "unicode_space_in_quote",
                )
            )
        groups.append(cases)
    return round_robin(ctx.rng, groups)


def ellipsis(ctx: Ctx) -> list[Case]:
    out = []
    for rec, version, path, text in ctx.passages():
        for a, b in (("\u2026", "..."), ("...", "\u2026")):
            i = text.find(a)
            if i >= 0:
                lo, hi = window(text, i, i + len(a), ctx.rng)
                quote = text[lo:hi].replace(a, b)
                out.append(quoted(ctx, rec, version, path, quote, "ellipsis"))
    return out


def invisible_in_quote(ctx: Ctx) -> Iterator[Case]:
    """An invisible character inserted inside a word of a verbatim quote."""
    passages = ctx.passages()
    groups = []
    for mark in INVISIBLES:
        cases = []
        for rec, version, path, text in passages:
            i = ctx.rng.randrange(len(text))
            lo, hi = window(text, i, i + 1, ctx.rng)
            quote = text[lo:hi]
            cut = next(
                (k for k in range(1, len(quote)) if quote[k - 1].isalpha() and quote[k].isalpha()),
                None,
            )
            if cut is not None:
                cases.append(
                    quoted(
                        ctx,
                        rec,
                        version,
                        path,
                        quote[:cut] + mark + quote[cut:],
                        "invisible_in_quote",
                    )
                )
        groups.append(cases)
    return round_robin(ctx.rng, groups)


def invisible_in_passage(ctx: Ctx) -> Iterator[Case]:
    found = _around(ctx, INVISIBLES)
    groups = []
    for mark in INVISIBLES:
        cases = []
        for rec, version, path, text, i in found[mark]:
            lo, hi = window(text, i, i + 1, ctx.rng)
            cases.append(
                quoted(
                    ctx, rec, version, path, text[lo:hi].replace(mark, ""), "invisible_in_passage"
                )
            )
        groups.append(cases)
    return round_robin(ctx.rng, groups)


def decomposed(ctx: Ctx) -> list[Case]:
    out = []
    for rec, version, path, text in ctx.passages():
        for i, c in enumerate(text):
            if unicodedata.normalize("NFD", c) != c:
                lo, hi = window(text, i, i + 1, ctx.rng)
                quote = unicodedata.normalize("NFD", text[lo:hi])
                out.append(quoted(ctx, rec, version, path, quote, "decomposed_accent"))
    return out


def whitespace_runs(ctx: Ctx) -> list[Case]:
    runs = ("  ", " \t ", "\u2003 \t", "   ")
    out = []
    for rec, version, path, text in ctx.passages():
        i = text.find(" ", ctx.rng.randrange(len(text)))
        if i > 0:
            lo, hi = window(text, i, i + 1, ctx.rng)
            run = ctx.rng.choice(runs)
            quote = " " + replace_at(text, i, run)[lo : hi + len(run) - 1] + "  "
            out.append(quoted(ctx, rec, version, path, quote, "whitespace_run"))
    return out


# --- one-detail misquotes ----------------------------------------------------------------------


def misquote(
    cat: str, find: Callable[[str], Iterable[tuple[int, int, str]]]
) -> Callable[[Ctx], list[Case]]:
    """Quotes with one detail changed: ``find(text)`` yields (start, end, replacement)."""

    def build(ctx: Ctx) -> list[Case]:
        out = []
        for rec, version, path, text in ctx.passages():
            for start, end, new in find(text):
                lo, hi = window(text, start, end, ctx.rng)
                quote = (text[:start] + new + text[end:])[lo : hi + len(new) - (end - start)]
                out.append(quoted(ctx, rec, version, path, quote, cat))
        ctx.rng.shuffle(out)
        return out

    return build


def _digits(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        if c.isascii() and c.isdigit():
            yield i, i + 1, str((int(c) + 1) % 10)


def _decimals(text: str) -> Iterator[tuple[int, int, str]]:
    for i in range(1, len(text) - 1):
        if text[i] == "." and text[i - 1].isdigit() and text[i + 1].isdigit():
            yield i, i + 1, ""
            yield i, i + 1, ","


_SWAPS = {"<": ">", ">": "<", "\u2264": "<", "\u2265": ">", "=": "\u2260"}


def _comparisons(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        if c in _SWAPS:
            yield i, i + 1, _SWAPS[c]


_UNITS = {
    "mg": "\u00b5g",
    "\u00b5g": "mg",
    "mL": "L",
    "L/h": "mL/h",
    "cm\u00b2": "mm\u00b2",
    "%": " percent",
}


def _units(text: str) -> Iterator[tuple[int, int, str]]:
    for unit, other in _UNITS.items():
        i = text.find(unit)
        if i >= 0:
            yield i, i + len(unit), other


def _minus(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        if c in "\u2212" and i + 1 < len(text) and text[i + 1].isdigit():
            yield i, i + 1, ""
        if c.isdigit() and (i == 0 or text[i - 1] == " ") and "\u2212" in text:
            yield i, i, "\u2212"


def _case(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        if c.isalpha() and c.swapcase() != c and len(c.swapcase()) == 1:
            yield i, i + 1, c.swapcase()


_ACCENTS = {
    "e": "\u00e9",
    "a": "\u00e0",
    "o": "\u00f6",
    "u": "\u00fc",
    "n": "\u00f1",
    "c": "\u00e7",
}


def _added_accent(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        if c in _ACCENTS:
            yield i, i + 1, _ACCENTS[c]


def _flattened(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        flat = unicodedata.normalize("NFKC", c)
        if flat != c and flat.isdigit():
            yield i, i + 1, flat


def _removed_space(text: str) -> Iterator[tuple[int, int, str]]:
    for i, c in enumerate(text):
        if c == " " and i > 0 and text[i - 1].isalnum() and text[i + 1 : i + 2].isalnum():
            yield i, i + 1, ""


def _inserted_not(text: str) -> Iterator[tuple[int, int, str]]:
    for word in (" was ", " were ", " did ", " may ", " is "):
        i = text.find(word)
        if i >= 0:
            yield i, i + len(word), f"{word}not "


def _swapped(text: str) -> Iterator[tuple[int, int, str]]:
    words = text.split(" ")
    at = 0
    for a, b in pairwise(words):
        if a.isalpha() and b.isalpha() and a != b:
            yield at, at + len(a) + 1 + len(b), f"{b} {a}"
        at += len(a) + 1


def empty_quote(ctx: Ctx) -> list[Case]:
    out = []
    for rec, version, path, _ in ctx.passages():
        for quote in ("", " ", "\u200b", "\u00a0\t"):
            out.append(quoted(ctx, rec, version, path, quote, "empty_quote"))
    ctx.rng.shuffle(out)
    return out


def other_passage(ctx: Ctx) -> list[Case]:
    """A verbatim quote of one passage cited with another path of the same record."""
    out = []
    for rec, version, path, text in ctx.passages():
        for other in rec.versions[version]:
            if other != path:
                lo, hi = window(text, len(text) // 2, len(text) // 2 + 1, ctx.rng)
                out.append(
                    quoted(ctx, rec, version, other, text[lo:hi], "quote_from_other_passage")
                )
    ctx.rng.shuffle(out)
    return out


def pinned_pairs(ctx: Ctx) -> Iterator[tuple[Rec, str, str, str, str]]:
    """(record, old version, path, old text, current text) of pinned records whose passage
    changed between a retained version and the current one."""
    for rec in ctx.world.records.values():
        if ctx.pin(rec) is None or rec.withdrawn:
            continue
        for version in rec.versions:
            if version == rec.current:
                continue
            for path, old in rec.versions[version].items():
                new = rec.text(rec.current, path)
                if new is not None and new != old:
                    yield rec, version, path, old, new


def windows_only_in(ctx: Ctx, text: str, other: str, step: int) -> Iterator[tuple[int, int]]:
    """Word windows of ``text`` whose folded form ``other`` does not hold."""
    for i in range(0, len(text), step):
        lo, hi = window(text, i, i + 1, ctx.rng)
        if oracle.fold(text[lo:hi]) not in oracle.fold(other):
            yield lo, hi


def other_version_quote(ctx: Ctx) -> list[Case]:
    """Pinned to the current version, quoting only an older version's text: a misquote."""
    return [
        quoted(ctx, rec, rec.current, path, old[lo:hi], "quote_of_another_version")
        for rec, _version, path, old, new in pinned_pairs(ctx)
        for lo, hi in windows_only_in(ctx, old, new, 7)
    ]
