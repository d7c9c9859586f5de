"""The handle codec: ``scheme:id[@version]/path~check`` (DESIGN.md §3, docs/contract.md).

Grammar (every handle has exactly one spelling; nothing is case-folded)::

    handle   = locator "~" check
    locator  = scheme ":" id pin "/" path
    scheme   = "pmid" | "pmcid" | "ppr" | "nct" | "setid" | "local"
    pin      = "@" version                         for ppr, nct, setid, local (PINNED_SCHEMES)
             | [ "@" version ]                     for pmid, pmcid
    id       = pmid:  [1-9][0-9]{0,9}
               pmcid: "PMC" [1-9][0-9]{0,9}
               ppr:   "PPR" [1-9][0-9]{0,9}
               nct:   "NCT" [0-9]{8}
               setid: lower-case UUID 8-4-4-4-12 hex digits
               local: a file's path in the user's folder, %XX-encoded (audit.local_ids)
    version  = [0-9A-Za-z] [0-9A-Za-z.-]*          (at most 40 characters)
    path     = segment ( "." segment )*            (at most 200 characters)
    segment  = [a-z0-9_]+
    check    = 5 characters of lower-case Crockford base32 (0-9 a-z without i l o u)

Trial, label, preprint and local-document handles always pin the upstream version they were
issued from (a local document's version is a digest of its bytes), so one without
``@version`` is malformed (every door — mint, verify, the audit — parses with this grammar,
so none can accept one).

``check`` is the first 25 bits of HMAC-SHA256(key, locator text), computed by
:class:`audit.keys.Keyring`. The parser is written like ``packaging/_parser.py``: one small
function per rule, each failure a :class:`~audit.errors.CitationSyntaxError` carrying the
text, the span of the part that failed and what was expected there.

Two parsers accept the one language. A well-formed string is accepted by one regular
expression of the whole grammar (:func:`_form`), which builds the parsed value directly; only
a string it rejects goes to the precise parser, which explains the flaw with its span (a
caret). A property test proves they accept the same strings and build equal values. A
:class:`Locator` is well formed by construction, so :func:`mint` signs one without parsing.
A parsed :class:`Handle` is one object holding the text the grammar accepted; its locator is
split from that text on first use (:func:`_split_locator`), and :func:`verify` needs none
(it signs the text before ``~``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from audit.errors import CitationSyntaxError
from audit.keys import CHECK_ALPHABET, CHECK_LENGTH, Keyring
from audit.local_ids import LOCAL_ID_RULE, local_id_problem

SCHEMES = ("pmid", "pmcid", "ppr", "nct", "setid", "local")
PINNED_SCHEMES = frozenset({"nct", "setid", "ppr", "local"})
"""Schemes whose handles must pin ``@version`` (the upstream version); the grammar enforces it."""

PRECISE_ONLY = frozenset({"local"})
"""Schemes the fast path never accepts: their handles are parsed by the precise parser only."""

MAX_VERSION_CHARS = 40
MAX_PATH_CHARS = 200

_ID_RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "pmid": (re.compile(r"[1-9][0-9]{0,9}"), "pmid must be 1 to 10 digits without a leading zero"),
    "pmcid": (
        re.compile(r"PMC[1-9][0-9]{0,9}"),
        "pmcid must be PMC followed by 1 to 10 digits without a leading zero",
    ),
    "ppr": (
        re.compile(r"PPR[1-9][0-9]{0,9}"),
        "ppr id must be PPR followed by 1 to 10 digits without a leading zero",
    ),
    "nct": (re.compile(r"NCT[0-9]{8}"), "nct id must be NCT followed by 8 digits"),
    "setid": (
        re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
        "setid must be a lower-case UUID (8-4-4-4-12 hex digits)",
    ),
    "local": (re.compile(r"(?:[A-Za-z0-9._-]|%[0-9A-F]{2})+"), LOCAL_ID_RULE),
}
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.\-]*")
_SEGMENT = re.compile(r"[a-z0-9_]+")
_SCHEME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _form(path_end: str) -> str:
    """The grammar's exact language as one regular expression (the fast accepting path).

    It leaves out ``local`` ids, whose rules (one spelling, NFC, no hidden part:
    :mod:`audit.local_ids`) are not a regular language: :data:`PRECISE_ONLY` schemes always
    go to the precise parser.

    Groups: ``scheme:id``, version (or None), path. The schemes that must pin a version are
    followed by a lookahead for ``@``; the path's length limit is a lookahead up to
    ``path_end``; the path's repeats are possessive (``++``: a segment's characters exclude
    the ``.`` and ``~`` that may follow it, so giving any back never helps). Only explicit
    ASCII classes (``[0-9]``, never ``\\d``, which matches other scripts' digits); used with
    ``fullmatch`` (``$`` would accept a trailing newline).
    """
    number = "[1-9][0-9]{0,9}"
    hexes = "-".join(f"[0-9a-f]{{{n}}}" for n in (8, 4, 4, 4, 12))
    record = (
        f"pmid:{number}|pmcid:PMC{number}|(?:ppr:PPR{number}|nct:NCT[0-9]{{8}}|setid:{hexes})(?=@)"
    )
    version = f"[0-9A-Za-z][0-9A-Za-z.\\-]{{0,{MAX_VERSION_CHARS - 1}}}"
    path = f"(?=[a-z0-9_.]{{1,{MAX_PATH_CHARS}}}{path_end})[a-z0-9_]++(?:\\.[a-z0-9_]++)*+"
    return f"({record})(?:@({version}))?/({path})"


_LOCATOR_FORM = re.compile(_form(r"\Z")).fullmatch
_HANDLE_FORM = re.compile(_form("~") + f"~([{CHECK_ALPHABET}]{{{CHECK_LENGTH}}})").fullmatch
_new = object.__new__


@dataclass(frozen=True, slots=True)
class Locator:
    """The address of one passage: which record (and version) and which path in it.

    A locator is well formed by construction: building one that breaks the grammar raises
    :class:`CitationSyntaxError` (the precise parser's error for its text, or "does not
    round-trip" when the text reads back as other fields), so :func:`mint` signs it without
    parsing it again. The parsers build locators from what the grammar already accepted
    (:func:`_accepted_locator`), without checking twice.
    """

    scheme: str
    id: str
    path: str
    version: str | None = None
    text: str = field(init=False, repr=False, compare=False)
    """The locator as written in a handle (the text the check code signs); the grammar has
    one spelling per locator, so the parsers seed it with the slice they accepted."""

    def __post_init__(self) -> None:
        pin = f"@{self.version}" if self.version is not None else ""
        text = f"{self.scheme}:{self.id}{pin}/{self.path}"
        _put_text(self, text)
        match = _LOCATOR_FORM(text)
        if match is not None and match.groups() == (self.record_id, self.version, self.path):
            return
        parsed = _precise_locator(text)  # raises the precise error for the text
        if (parsed.scheme, parsed.id, parsed.version, parsed.path) != (
            self.scheme,
            self.id,
            self.version,
            self.path,
        ):
            raise CitationSyntaxError(
                f"locator {text!r} does not round-trip through the grammar",
                text=text,
                start=0,
                end=len(text),
                expected="locator",
            )

    @property
    def record_id(self) -> str:
        """``scheme:id``, e.g. ``nct:NCT99000001``."""
        return f"{self.scheme}:{self.id}"


# The frozen slots' own setters: how the parsers fill a Locator they accepted (no re-check).
_put_scheme, _put_id, _put_path, _put_version, _put_text = (
    getattr(Locator, name).__set__ for name in ("scheme", "id", "path", "version", "text")
)


def _accepted_locator(record: str, version: str | None, path: str, text: str) -> Locator:
    """A :class:`Locator` for fields the grammar accepted, ``text`` the slice it accepted."""
    scheme, _, ident = record.partition(":")
    locator = _new(Locator)
    _put_scheme(locator, scheme)
    _put_id(locator, ident)
    _put_path(locator, path)
    _put_version(locator, version)
    _put_text(locator, text)
    return locator


def _split_locator(text: str) -> Locator:
    """The :class:`Locator` of a locator text the fast form accepted, split at its delimiters.

    In the grammar no id, version or path holds ``/``, no id holds ``@`` and no scheme ``:``,
    so the first ``/`` ends ``scheme:id[@version]``, an ``@`` before it starts the version
    (never empty when present) and the first ``:`` ends the scheme. The property test of the
    two parsers compares this locator with the precise parser's."""
    head, _, path = text.partition("/")
    record, _, version = head.partition("@")
    return _accepted_locator(record, version or None, path, text)


class Handle:
    """A locator with its check code: ``locator.text~check``, read-only, equal by its text.

    A parsed handle holds the text the grammar accepted; its :class:`Locator` is split from
    that text on first use (verifying a handle needs only the text: :func:`verify`). One
    small object per parsed handle, because an audit holds every handle it parsed.
    """

    __slots__ = ("_locator", "_text")
    _text: str
    _locator: Locator | None

    def __init__(self, locator: Locator, check: str) -> None:
        self._text = f"{locator.text}~{check}"
        self._locator = locator

    @property
    def text(self) -> str:
        """The handle as written: ``locator.text~check``."""
        return self._text

    @property
    def check(self) -> str:
        """The check code (after the ``~``; a locator never holds one)."""
        return self._text.partition("~")[2]

    @property
    def locator(self) -> Locator:
        """The handle's locator, split once from the text the grammar accepted."""
        locator = self._locator
        if locator is None:
            locator = self._locator = _split_locator(self._text.partition("~")[0])
        return locator

    def __eq__(self, other: object) -> bool:
        return self._text == other._text if isinstance(other, Handle) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        return f"Handle({self.locator!r}, {self.check!r})"


class _Cursor:
    """A position in the text being parsed, with helpers that raise exact errors."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, start: int, end: int, expected: str) -> CitationSyntaxError:
        return CitationSyntaxError(message, text=self.text, start=start, end=end, expected=expected)

    def until(self, stops: str) -> tuple[str, int, int]:
        """Consume up to (not including) the first character of ``stops`` or the end."""
        start = self.pos
        end = start
        while end < len(self.text) and self.text[end] not in stops:
            end += 1
        self.pos = end
        return self.text[start:end], start, end

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def got(self) -> str:
        """What stands at the cursor, for "got ..." in messages."""
        return repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"


def _scheme(cur: _Cursor) -> str:
    """scheme = "pmid" | "pmcid" | "ppr" | "nct" | "setid" | "local", followed by ":"."""
    match = _SCHEME_WORD.match(cur.text, cur.pos)
    start = cur.pos
    if match is None:
        raise cur.fail(
            f"expected a scheme (one of {', '.join(SCHEMES)}), got {cur.got()}",
            start,
            start + 1,
            "scheme",
        )
    word = match.group()
    cur.pos = match.end()
    if word not in SCHEMES:
        raise cur.fail(
            f"unknown scheme {word!r} (expected one of {', '.join(SCHEMES)})",
            start,
            cur.pos,
            "scheme",
        )
    if cur.peek() != ":":
        raise cur.fail(
            f"expected ':' after the scheme, got {cur.got()}", cur.pos, cur.pos + 1, "':'"
        )
    cur.pos += 1
    return word


def _record_id(cur: _Cursor, scheme: str) -> str:
    """id = the scheme's identifier form (see the module docstring), ended by "@" or "/"."""
    value, start, end = cur.until("@/~")
    pattern, rule = _ID_RULES[scheme]
    if not pattern.fullmatch(value):
        raise cur.fail(f"{rule}, got {value!r}", start, max(end, start + 1), f"{scheme} id")
    problem = local_id_problem(value) if scheme == "local" else None
    if problem is not None:  # one spelling per file name (audit.local_ids)
        raise cur.fail(f"{problem}, got {value!r}", start, end, "local id")
    return value


def _version(cur: _Cursor, scheme: str) -> str | None:
    """pin = "@" version (ppr, nct, setid, local) | [ "@" version ] (pmid, pmcid), with
    version = [0-9A-Za-z] [0-9A-Za-z.-]*."""
    if cur.peek() != "@":
        if scheme in PINNED_SCHEMES:
            raise cur.fail(
                f"{scheme} handles pin the record version: expected '@' and a version after "
                f"the id, got {cur.got()}",
                cur.pos,
                cur.pos + 1,
                "'@' version",
            )
        return None
    cur.pos += 1
    value, start, end = cur.until("/~")
    if not _VERSION.fullmatch(value) or len(value) > MAX_VERSION_CHARS:
        raise cur.fail(
            "version must start with a letter or digit and contain only letters, digits, "
            f"'.' and '-' (at most {MAX_VERSION_CHARS} characters), got {value!r}",
            start,
            max(end, start + 1),
            "version",
        )
    return value


def _path(cur: _Cursor) -> str:
    """path = "/" segment ( "." segment )*  with segment = [a-z0-9_]+."""
    if cur.peek() != "/":
        raise cur.fail(
            f"expected '/' followed by a passage path, got {cur.got()}",
            cur.pos,
            cur.pos + 1,
            "'/'",
        )
    cur.pos += 1
    value, start, end = cur.until("~")
    if not value:
        raise cur.fail("empty passage path after '/'", start, start + 1, "path")
    offset = start
    for segment in value.split("."):
        if not _SEGMENT.fullmatch(segment):
            bad = next((i for i, c in enumerate(segment) if not _SEGMENT.fullmatch(c)), 0)
            where = offset + bad
            what = repr(segment[bad]) if segment else "an empty segment"
            raise cur.fail(
                "path segments must be lower-case letters, digits or '_' separated by '.', "
                f"got {what} in {value!r}",
                where,
                where + 1,
                "path segment",
            )
        offset += len(segment) + 1
    if len(value) > MAX_PATH_CHARS:
        raise cur.fail(
            f"passage path is {len(value)} characters long (at most {MAX_PATH_CHARS})",
            start,
            end,
            "path",
        )
    return value


def _locator(cur: _Cursor) -> Locator:
    """locator = scheme ":" id pin "/" path."""
    scheme = _scheme(cur)
    record = _record_id(cur, scheme)
    version = _version(cur, scheme)
    path = _path(cur)
    return _accepted_locator(f"{scheme}:{record}", version, path, cur.text[: cur.pos])


def _check(cur: _Cursor) -> str:
    """check = "~" 5 * crockford-base32-lower."""
    if cur.peek() != "~":
        raise cur.fail(
            f"missing check code: expected '~' followed by {CHECK_LENGTH} characters",
            cur.pos,
            cur.pos + 1,
            "'~'",
        )
    cur.pos += 1
    start = cur.pos
    value = cur.text[start:]
    cur.pos = len(cur.text)
    if len(value) != CHECK_LENGTH or any(c not in CHECK_ALPHABET for c in value):
        raise cur.fail(
            f"check code must be {CHECK_LENGTH} lower-case Crockford base32 characters "
            f"(0-9, a-z without i, l, o, u), got {value!r}",
            start,
            max(len(cur.text), start + 1),
            "check code",
        )
    return value


def _end(cur: _Cursor) -> None:
    """The locator must be followed by nothing (used by :func:`parse_locator`)."""
    if cur.pos < len(cur.text):
        raise cur.fail(
            f"unexpected {cur.got()} after the passage path (a locator has no check code)",
            cur.pos,
            len(cur.text),
            "end of locator",
        )


def _precise_locator(text: str) -> Locator:
    """The precise parser of a locator: one rule at a time, an exact error at the first flaw."""
    cur = _Cursor(text)
    locator = _locator(cur)
    _end(cur)
    return locator


def _precise_handle(text: str) -> Handle:
    """The precise parser of a handle: one rule at a time, an exact error at the first flaw."""
    cur = _Cursor(text)
    locator = _locator(cur)
    _check(cur)
    return _accepted_handle(text, locator)


def _accepted_handle(text: str, locator: Locator | None) -> Handle:
    """A :class:`Handle` for a text the grammar accepted (its locator, if already built)."""
    handle = _new(Handle)
    handle._text = text
    handle._locator = locator
    return handle


def _fast_locator(text: str) -> Locator | None:
    """The locator when ``text`` is in the grammar's language (one regex match), else None."""
    match = _LOCATOR_FORM(text)
    if match is None:
        return None
    record, version, path = match.groups()
    return _accepted_locator(record, version, path, text)


def _fast_handle(text: str) -> Handle | None:
    """The handle when ``text`` is in the grammar's language (one regex match), else None."""
    return None if _HANDLE_FORM(text) is None else _accepted_handle(text, None)


def parse_locator(text: str) -> Locator:
    """Parse ``scheme:id[@version]/path``; raise :class:`CitationSyntaxError` on any flaw.

    A well-formed locator is accepted by one regex match (:func:`_fast_locator`); anything
    else goes to the precise parser, which says where and why it fails. The two accept the
    same language but for the :data:`PRECISE_ONLY` schemes, which only the precise parser
    accepts, and build equal values (a property test in tests/audit/test_handles.py)."""
    locator = _fast_locator(text)
    return locator if locator is not None else _precise_locator(text)


def parse_handle(text: str) -> Handle:
    """Parse ``scheme:id[@version]/path~check``; raise :class:`CitationSyntaxError`.

    Fast path and precise fallback as in :func:`parse_locator`."""
    handle = _fast_handle(text)
    return handle if handle is not None else _precise_handle(text)


def mint(keyring: Keyring, locator: Locator) -> str:
    """The handle text for ``locator`` signed with the keyring's current key.

    A :class:`Locator` is well formed by construction, so it is signed as it is (not parsed
    again)."""
    text = locator.text
    return f"{text}~{keyring.check_code(text)}"


def verify(keyring: Keyring, handle: Handle) -> bool:
    """True when the handle's check code verifies under any key of the keyring."""
    locator_text, _, check = handle.text.partition("~")
    return keyring.verifies(locator_text, check)
