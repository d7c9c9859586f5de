"""Untrusted text shown in a terminal: one sanitiser, one policy.

Answers, record titles and passages, quotes, handles as written, file names and the error
messages that quote them are untrusted: a terminal escape sequence could rewrite the screen, a
bidi override or isolate could reorder what a reader sees (``ok`` where the text says
``forged``), an invisible character could hide text, and a line break could forge a line of
output. Everything the CLI prints passes through :func:`terminal_lines` (the CLI wraps its
standard output and error, :mod:`pipeline.cli.output`); fields that are part of one line go
through :func:`one_line` where the line is composed (the text report, search results, carets
under grammar errors).

**Unsafe** characters (:func:`is_unsafe`): every character :meth:`str.isprintable` rejects
except the spaces (Unicode ``Zs``, drawn as spaces), i.e. the categories

- ``Cc`` controls: C0 (``ESC`` starts escape sequences), DEL, C1 (U+009B is a CSI);
- ``Cf`` format characters: bidi embeddings, overrides, isolates and marks (U+202A–U+202E,
  U+2066–U+2069, U+200E, U+200F, U+061C), zero-width spaces and joiners, the soft hyphen, the
  BOM, the invisible operators, the tag characters (U+E0000 block);
- ``Zl``, ``Zp`` line and paragraph separators;
- ``Cs`` lone surrogates (a file name that is not UTF-8 arrives with them);
- ``Co`` private use and ``Cn`` unassigned code points (nobody knows how a terminal draws
  them; this includes characters newer than Python's Unicode database);

plus the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, letters that draw nothing.

**Escapes** (:func:`escape`) are spelled as in JSON — ``\\u001b``, ``\\u202e``, and a surrogate
pair ``\\udb40\\udc41`` above U+FFFF — so the same sanitiser keeps JSON output valid and equal
to what it was (only inside strings can such a character occur in JSON).

- :func:`one_line`: tabs and line breaks (``\\t \\n \\v \\f \\r``, U+0085, U+2028, U+2029)
  become one space per run; every other unsafe character is escaped;
- :func:`terminal_lines`: ``\\n`` is kept (it ends a line citeseal composed), every other
  unsafe character is escaped;
- :func:`html_text` (an HTML document printed to a terminal): unsafe characters other than
  ``\\n`` and ``\\t`` become character references (``&#x202e;``), which mean the same in HTML.

Everything else passes unchanged: letters with accents, CJK, emoji, combining marks,
punctuation, spaces. A backslash is not escaped, so ``\\u001b`` in plain output may also be
those six characters as written; ``--json`` output tells the two apart.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

_FILLERS = "\u115f\u1160\u3164\uffa0"
_FILLER = re.compile(f"[{_FILLERS}]")
_BREAKS = frozenset("\t\n\x0b\x0c\r\x85\u2028\u2029")


def is_unsafe(char: str) -> bool:
    """Whether one character must not reach a terminal as it is (see the module docstring)."""
    if char.isprintable():
        return char in _FILLERS
    return unicodedata.category(char) != "Zs"


def _clean(text: str) -> bool:
    return text.isprintable() and _FILLER.search(text) is None


def escape(char: str) -> str:
    """The character as a JSON-style escape: ``\\u202e``, or a surrogate pair above U+FFFF."""
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def one_line(text: str) -> str:
    """One line of untrusted text, safe to print: breaks → one space, the rest escaped."""
    if _clean(text):
        return text
    out: list[str] = []
    breaking = False
    for char in text:
        if char in _BREAKS:
            if not breaking:
                out.append(" ")
            breaking = True
            continue
        out.append(escape(char) if is_unsafe(char) else char)
        breaking = False
    return "".join(out)


def _char_reference(char: str) -> str:
    return f"&#x{ord(char):x};"


def _escape_unsafe(text: str, keep: str, spell: Callable[[str], str]) -> str:
    def line(part: str) -> str:
        if _clean(part):
            return part
        return "".join(c if c in keep or not is_unsafe(c) else spell(c) for c in part)

    return "\n".join(line(part) for part in text.split("\n"))


def terminal_lines(text: str) -> str:
    """Text citeseal composed (or JSON), safe to print: ``\\n`` kept, every other unsafe
    character escaped as in JSON."""
    return _escape_unsafe(text, "", escape)


def html_text(text: str) -> str:
    """An HTML document, safe to print: unsafe characters other than ``\\n`` and ``\\t`` as
    character references (the document means the same)."""
    return _escape_unsafe(text, "\t", _char_reference)


def page_text(text: str) -> str:
    """Untrusted text for an HTML page (before HTML escaping): unsafe characters other than
    ``\n`` and ``\t`` escaped as in JSON, so the reader sees them."""
    return _escape_unsafe(text, "\t", escape)


def display_width(text: str) -> int:
    """Terminal columns of printable text: wide (CJK) characters 2, combining marks 0."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def caret_lines(text: str, start: int, end: int, *, prefix: str = "") -> tuple[str, str]:
    """``prefix`` + the sanitised ``text``, and a caret line under its ``start:end`` span.

    The span is measured on what is printed (escapes are longer than the characters they
    stand for, wide characters take two columns), so the caret stays under the failing part.
    """
    before, span, after = (one_line(part) for part in (text[:start], text[start:end], text[end:]))
    indent = display_width(prefix) + display_width(before)
    return prefix + before + span + after, " " * indent + "^" * max(1, display_width(span))
