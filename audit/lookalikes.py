"""Look-alike skeletons: handle-shaped text written in confusable or invisible characters.

A handle can read as one and not be one: ``ｐｍｉｄ:…`` in fullwidth letters, ``рmid:…`` with a
Cyrillic ``р``, ``pm<U+200B>id:…`` with a zero-width space, a bidi override inside the check
code, ``pmid\\:…``, ``pmid&#58;…`` or ``pm**id**:…``, which every Markdown or HTML renderer
shows as ``pmid:…``. Such text must be a ``malformed`` citation, never uncited prose, so the
citation scanner (:mod:`audit.citation_scan`) looks for handles in the *skeleton* of the text,
in which

0. markup is read as a renderer reads it: a backslash before ASCII punctuation (a Markdown
   escape, ``\\:``) is dropped; a character reference (``&#58;``, ``&#x3a;``, ``&colon;``;
   :func:`html.unescape` semantics, so ``&amp`` without ``;`` too) becomes the characters it
   stands for, which steps 1–3 then map; a run of emphasis or code markers (``*``, `````)
   between two characters a handle can hold (``pm**id**``) is dropped;
1. invisible characters are dropped: format characters (Unicode category Cf: zero-width
   space/joiners, bidi controls, BOM, soft hyphen, tags, …), the other default-ignorable
   characters (:data:`FILLERS`: Hangul fillers, Mongolian variation selectors, combining
   grapheme joiner) and combining marks (category M: accents, variation selectors);
2. every other non-ASCII character becomes the ASCII it imitates: its compatibility
   decomposition (NFKD) without combining marks when that is ASCII (fullwidth ``ｐ``,
   mathematical ``𝐩``, ``í``, no-break spaces), else the table :data:`LOOKALIKES` (Cyrillic,
   Greek, Armenian, Lisu, Cherokee and small-capital letters, look-alike ``:`` ``/`` ``~``
   ``.``, the dashes and quote marks of :mod:`audit.folding`), else the value of a Unicode
   decimal digit
   (``٣`` → ``3``);
3. ASCII stays itself, and so does any other character.

A span found in the skeleton maps back to the original text with :meth:`Skeleton.span` (an
escape or a reference maps back whole), widened over the combining marks that follow it (they
change the glyph before them). :func:`require_plain` refuses handle text that is not plain
ASCII or holds markup, naming the first look-alike or invisible character, escape, reference
or marker and its position. All of it is pure and linear in the text's length.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from html.entities import html5

from audit.errors import CitationSyntaxError
from audit.folding import DASHES, DOUBLE_QUOTES, INVISIBLE, NO_BREAK_SPACES, SINGLE_QUOTES

FILLERS = frozenset(
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160"  # Hangul choseong/jungseong fillers
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b\u180c\u180d\u180e\u180f"  # Mongolian free variation selectors, vowel separator
    "\u3164"  # Hangul filler
    "\uffa0"  # halfwidth Hangul filler
) | frozenset(INVISIBLE)
"""Invisible characters that are not in category Cf or M (plus folding's invisible set)."""

# fmt: off
_LETTERS = {
    # Cyrillic
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o",
    "р": "p", "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "А": "A", "В": "B", "С": "C",
    "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M", "О": "O", "Р": "P", "Ѕ": "S",
    "Т": "T", "Х": "X", "Ү": "Y", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    # Greek
    "α": "a", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "χ": "x", "ϲ": "c",
    "ϳ": "j", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C", "Ϳ": "J",
    # Armenian
    "օ": "o", "ս": "u", "ո": "n", "հ": "h", "Օ": "O", "Ս": "U",
    # Latin letters that NFKD leaves alone: dotless i and j, script a and g, small capitals
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d",
    "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j", "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n",
    "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y",
    "ᴢ": "z",
    # Lisu and Cherokee letters shaped like Latin capitals
    "ꓐ": "B", "ꓑ": "P", "ꓓ": "D", "ꓔ": "T", "ꓖ": "G", "ꓗ": "K", "ꓙ": "J", "ꓚ": "C", "ꓜ": "Z",
    "ꓝ": "F", "ꓟ": "M", "ꓠ": "N", "ꓡ": "L", "ꓢ": "S", "ꓣ": "R", "ꓦ": "V", "ꓧ": "H", "ꓪ": "W",
    "ꓫ": "X", "ꓬ": "Y", "ꓮ": "A", "ꓰ": "E", "ꓲ": "I", "ꓳ": "O", "ꓴ": "U", "Ꭺ": "A", "Ᏼ": "B",
    "Ꮯ": "C", "Ꭰ": "D", "Ꭼ": "E", "Ꮐ": "G", "Ꮋ": "H", "Ꭻ": "J", "Ꮶ": "K", "Ꮮ": "L", "Ꮇ": "M",
    "Ꮲ": "P", "Ꮪ": "S", "Ꮤ": "T", "Ꮩ": "V", "Ꮃ": "W", "Ꮓ": "Z",
}
# fmt: on
_PUNCTUATION = {
    **dict.fromkeys("\u2236\u02d0\ua789\u0589\u05c3\u0703\u0704\u16ec\ufe13", ":"),
    **dict.fromkeys("\u2215\u2044\u2571\u29f8\u3033", "/"),
    **dict.fromkeys("\u223c\u2053\u02dc\u301c\u2e1f", "~"),
    **dict.fromkeys("\u0701\u0702\ua60e\u3002\u06d4", "."),
    "\u3001": ",",  # ideographic comma
    "\u02cd": "_",  # modifier letter low macron
    **dict.fromkeys(DASHES + "\u2043\u02d7", "-"),
    **dict.fromkeys(SINGLE_QUOTES, "'"),
    **dict.fromkeys(DOUBLE_QUOTES, '"'),
    **dict.fromkeys(NO_BREAK_SPACES, " "),
}
LOOKALIKES: dict[str, str] = {**_LETTERS, **_PUNCTUATION}
"""Non-ASCII characters → the ASCII they imitate, where NFKD does not say so."""

_SPECIAL = re.compile(r"[^\x00-\x7f]+|\\[!-/:-@\[-`{-~]|&")  # non-ASCII, an escape, a reference
_REFERENCE = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")  # html's
_HANDLE_CHAR = "0-9A-Za-z:/.@~_-"  # the characters of the handle grammar
_MARKERS = re.compile(rf"(?<=[{_HANDLE_CHAR}])[*`]+(?=[{_HANDLE_CHAR}])")
_IN_HANDLE = re.compile(r"[^\x00-\x7f]|\\[!-/:-@\[-`{-~]|&|[*`]+")  # what require_plain refuses


def is_invisible(char: str) -> bool:
    """True for a character that shows no glyph of its own (dropped from the skeleton)."""
    category = unicodedata.category(char)
    return category == "Cf" or category[0] == "M" or char in FILLERS


@lru_cache(maxsize=8192)
def ascii_of(char: str) -> str:
    """What a non-ASCII ``char`` becomes in the skeleton (see the module docstring)."""
    if is_invisible(char):
        return ""
    if char in LOOKALIKES:
        return LOOKALIKES[char]
    bare = "".join(
        LOOKALIKES.get(c, c)
        for c in unicodedata.normalize("NFKD", char)
        if unicodedata.category(c)[0] != "M"
    )
    if bare and bare.isascii():
        return bare
    digit = unicodedata.decimal(char, None)
    return str(digit) if digit is not None else char


def reference_at(text: str, at: int) -> tuple[str, int] | None:
    """The characters the character reference at ``text[at]`` (an ``&``) stands for, and
    where it ends; None when it is no reference. :func:`html.unescape` semantics: numeric
    references (invalid ones become U+FFFD or their Windows-1252 character), the HTML5 names,
    and the legacy names that need no ``;`` (``&amp``, ``&not``…; the longest one wins)."""
    found = _REFERENCE.match(text, at)
    if found is None:
        return None
    name = found.group(1)
    if name[0] == "#":
        return html.unescape(found.group()), found.end()
    if name in html5:
        return html5[name], found.end()
    for length in range(len(name) - 1, 1, -1):
        if name[:length] in html5:
            return html5[name[:length]], at + 1 + length
    return None


@dataclass(frozen=True)
class Skeleton:
    """The skeleton of ``source``: skeleton character i comes from ``source[origin[i]:
    ends[i]]`` (one character, an escape or a reference); both None when the skeleton is the
    source (ASCII text without markup)."""

    source: str
    text: str
    origin: tuple[int, ...] | None
    ends: tuple[int, ...] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The source span of the skeleton span ``[start, end)`` (non-empty)."""
        if self.origin is None or self.ends is None:
            return start, end
        first, last = self.origin[start], self.ends[end - 1]
        while last < len(self.source) and unicodedata.category(self.source[last])[0] == "M":
            last += 1  # a combining mark after the span belongs to its last glyph
        return first, last


def _read(text: str) -> tuple[list[str], list[int], list[int]]:
    """Steps 0–3 but the markers: skeleton pieces and the source span of each character."""
    parts: list[str] = []
    origin: list[int] = []
    ends: list[int] = []

    def emit(mapped: str, start: int, end: int) -> None:
        parts.append(mapped)
        origin.extend([start] * len(mapped))
        ends.extend([end] * len(mapped))

    at = 0
    for special in _SPECIAL.finditer(text):
        start = special.start()  # never inside a reference read: those are ASCII without "\\"
        parts.append(text[at:start])
        origin.extend(range(at, start))
        ends.extend(range(at + 1, start + 1))
        at = special.end()
        piece = special.group()
        if piece[0] == "\\":
            emit(piece[1], start, at)
        elif piece == "&":
            reference = reference_at(text, start)
            if reference is None:
                emit("&", start, at)
            else:
                decoded, at = reference
                emit("".join(c if c.isascii() else ascii_of(c) for c in decoded), start, at)
        else:
            for index in range(start, at):
                emit(ascii_of(text[index]), index, index + 1)
    parts.append(text[at:])
    origin.extend(range(at, len(text)))
    ends.extend(range(at + 1, len(text) + 1))
    return parts, origin, ends


def skeleton(text: str) -> Skeleton:
    """The skeleton of ``text`` (see the module docstring); linear time."""
    plain = text.isascii() and "\\" not in text and "&" not in text
    if plain and not _MARKERS.search(text):
        return Skeleton(text, text, None)
    if plain:
        sk, origin, ends = text, list(range(len(text))), list(range(1, len(text) + 1))
    else:
        parts, origin, ends = _read(text)
        sk = "".join(parts)
    runs = [run.span() for run in _MARKERS.finditer(sk)]  # step 0: markers inside a token
    if runs:
        bounds = [0, *(b for span in runs for b in span), len(sk)]
        keep = list(zip(bounds[::2], bounds[1::2], strict=True))
        sk = "".join(sk[a:b] for a, b in keep)
        origin = [o for a, b in keep for o in origin[a:b]]
        ends = [e for a, b in keep for e in ends[a:b]]
    return Skeleton(text, sk, tuple(origin), tuple(ends))


def describe(char: str) -> str:
    """``U+FF50 FULLWIDTH LATIN SMALL LETTER P`` (or just ``U+D800`` for a nameless one)."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}" if name else f"U+{ord(char):04X}"


def require_ascii(handle_text: str) -> None:
    """Raise :class:`CitationSyntaxError` at the first character of a handle that is not ASCII.

    Handles are plain ASCII (docs/contract.md); the message names the character, its code
    point and its 1-based position, and for a look-alike the ASCII character it imitates.
    """
    if not handle_text.isascii():
        index = next(i for i, c in enumerate(handle_text) if not c.isascii())
        raise _non_ascii(handle_text, index)


def _non_ascii(handle_text: str, index: int) -> CitationSyntaxError:
    """The error for the non-ASCII character at ``handle_text[index]``."""
    char = handle_text[index]
    where = f"at character {index + 1} of the handle"
    if is_invisible(char):
        kind = "combining mark" if unicodedata.category(char)[0] == "M" else "invisible character"
        message, expected = f"{kind} {describe(char)} {where}; a handle is plain ASCII", "ASCII"
    else:
        mapped = ascii_of(char)
        shown = ascii(char) if unicodedata.category(char) in ("Cs", "Co", "Cn") else repr(char)
        if mapped != char and mapped.isascii() and mapped.strip():
            message = (
                f"look-alike character {shown} ({describe(char)}) {where}, expected {mapped!r}"
            )
            expected = repr(mapped)
        else:
            message = (
                f"non-ASCII character {shown} ({describe(char)}) {where}; a handle is plain ASCII"
            )
            expected = "ASCII"
    return CitationSyntaxError(
        message, text=handle_text, start=index, end=index + 1, expected=expected
    )


def require_plain(handle_text: str) -> None:
    """Raise :class:`CitationSyntaxError` at the first character of a handle that is not
    plain ASCII (:func:`require_ascii`) or is markup a renderer would not show as written: a
    Markdown escape, a character reference, an emphasis or code marker (docs/contract.md)."""
    for found in _IN_HANDLE.finditer(handle_text):
        piece, start = found.group(), found.start()
        where = f"at character {start + 1} of the handle"
        if not piece.isascii():
            raise _non_ascii(handle_text, start)
        if piece[0] == "\\":
            message = f"Markdown escape '{piece}' {where}, expected {piece[1]!r}"
            expected = repr(piece[1])
        elif piece == "&":
            reference = reference_at(handle_text, start)
            if reference is None:
                continue  # a plain '&': the grammar names it
            decoded, end = reference
            piece = handle_text[start:end]
            message, expected = _reference_message(piece, decoded, where)
        else:
            kind = "code" if piece[0] == "`" else "emphasis"
            message = f"{kind} marker '{piece}' {where}; a handle is written without Markdown"
            expected = "no markup"
        raise CitationSyntaxError(
            message, text=handle_text, start=start, end=start + len(piece), expected=expected
        )


def _reference_message(piece: str, decoded: str, where: str) -> tuple[str, str]:
    """The message and the expected text for a character reference ``piece`` in a handle."""
    if len(decoded) == 1 and decoded.isascii() and decoded.isprintable() and decoded != " ":
        return f"character reference '{piece}' {where}, expected {decoded!r}", repr(decoded)
    if len(decoded) == 1:
        return (
            f"character reference '{piece}' ({describe(decoded)}) {where}; a handle is plain ASCII",
            "ASCII",
        )
    return f"character reference '{piece}' {where}; a handle is plain ASCII", "ASCII"
