"""Safe XML (and JSON) body loading for the pure parsers.

:func:`parse_xml` uses lxml with entity resolution off, no network, no DTD loading and no
``huge_tree``, and refuses documents that declare entities (billion laughs, quadratic blow-up,
external entities). Truncated or malformed XML, an HTML error page where XML was expected, or
an empty body become a :class:`~pipeline.errors.ParseError` with a one-line message.

:func:`text_of` reads the whole text of an element, inline markup included (``<i>``, ``<sup>``,
MathML…), never just ``.text`` — which stops at the first child tag.

Superscripts and subscripts are kept, never flattened (``10<sup>3</sup>`` is not ``103``):
:func:`script` writes the content of a ``<sup>`` / ``<sub>`` (and the script of a MathML
``<msup>`` / ``<msub>`` / ``<msubsup>``) in Unicode superscript or subscript characters when
every character of it has one (:data:`SUPERSCRIPTS`, :data:`SUBSCRIPTS`: ``10³``, ``IC₅₀``,
``Ca²⁺``), and otherwise in the notation ``^(…)`` / ``_(…)`` (``CYP_(3A4)``, ``x^(†)``).
Whitespace at either end of the content stays outside the script. :func:`flatten_scripts`
undoes both spellings, with the map from the flat text back to the original offsets (PubTator3
works on flattened text). The same rule applies to markup inside JSON strings
(:mod:`pipeline.sources.markup`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from html.entities import name2codepoint
from typing import Any, TypeAlias

from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)

from audit.json_depth import nesting_depth
from pipeline.errors import ParseError

Element: TypeAlias = Any  # lxml ships no type stubs; parsers annotate elements with this

_PARSER_OPTIONS: dict[str, Any] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
}
_WS = re.compile(r"[ \t\n\r\f\v]+")
_SHORT = 64  # below this length str.isprintable() is quicker than five substring scans
_ELEMENT: type = etree._Element  # pyright: ignore[reportPrivateUsage]  (comments, PIs differ)
_HTML_START = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])", re.I
)
_INTERNAL_SUBSET = re.compile(rb"<!DOCTYPE[^\[>]*\[(.*?)\]\s*>", re.S | re.I)
_POSITION = re.compile(r"(?:,? line \d+)?, column \d+$")
_ENTITY_MESSAGE = (
    "expected {what} but the XML declares entities (refused: entity expansion and external "
    "entities are not allowed)"
)
_HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)


def _as_bytes(body: str | bytes) -> bytes:
    """UTF-8 bytes of a body; a lone surrogate in a str body (a wrapper file's ``"\\ud800"``)
    becomes U+FFFD instead of an encoding error."""
    if isinstance(body, bytes):
        return body
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", body).encode("utf-8")


def html_error_title(body: str | bytes) -> str | None:
    """When ``body`` is an HTML page, its title (or ``"untitled"``); None otherwise."""
    data = _as_bytes(body)[:4096]
    if not _HTML_START.match(data):
        return None
    found = _HTML_TITLE.search(data)
    if not found:
        return "untitled"
    title = html.unescape(found.group(1).decode("utf-8", "replace"))
    return _WS.sub(" ", title).strip()[:80] or "untitled"


def reject_html(body: str | bytes, what: str) -> None:
    """Raise ParseError when the body is an HTML page (typically an error page)."""
    title = html_error_title(body)
    if title is not None:
        raise ParseError(
            f"expected {what} but got an HTML page ({title!r}); the service may have "
            "answered with an error page"
        )


def parse_xml(body: str | bytes, *, what: str) -> Element:
    """Parse untrusted XML safely; ``what`` names the expected document in error messages."""
    data = _as_bytes(body)
    if not data.strip():
        raise ParseError(f"expected {what} but the body is empty")
    reject_html(data, what)
    if isinstance(body, str) and data.lstrip().startswith(b"<?xml"):
        # the text was already decoded: drop the declaration so lxml does not re-decode
        data = re.sub(rb"^\s*<\?xml[^>]*\?>", b"", data, count=1)
    subset = _INTERNAL_SUBSET.search(data[:65536])
    if subset and b"<!ENTITY" in subset.group(1).upper():
        raise ParseError(_ENTITY_MESSAGE.format(what=what))
    parser = etree.XMLParser(**_PARSER_OPTIONS)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as error:
        message = _WS.sub(" ", str(error.msg or error)).strip()
        message = _POSITION.sub("", message)
        raise ParseError(f"expected {what} but the XML is not well-formed: {message}") from None
    if root is None:
        raise ParseError(f"expected {what} but the body holds no XML element")
    docinfo = root.getroottree().docinfo
    dtd = docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise ParseError(_ENTITY_MESSAGE.format(what=what))
    _inline_entities(root)
    return root


def _inline_entities(root: Element) -> None:
    """Replace undeclared named entity references (``&nbsp;`` with no DTD loaded) by text."""
    for entity in list(root.iter(etree.Entity)):
        name = str(entity.name)
        code = name2codepoint.get(name)
        replacement = chr(code) if code is not None else f"&{name};"
        replacement += entity.tail or ""
        parent = entity.getparent()
        if parent is None:
            continue
        previous = entity.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + replacement
        else:
            parent.text = (parent.text or "") + replacement
        parent.remove(entity)


def local(tag: object) -> str:
    """The local name of an element tag (``{ns}name`` → ``name``)."""
    text = tag if isinstance(tag, str) else ""
    return text.rsplit("}", 1)[-1]


_SUPER_PLAIN = "0123456789+-\u2212=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW"
_SUPER_CHARS = (
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207a\u207b\u207b\u207c\u207d\u207e"
    "\u1d43\u1d47\u1d9c\u1d48\u1d49\u1da0\u1d4d\u02b0\u2071\u02b2\u1d4f\u02e1\u1d50\u207f"
    "\u1d52\u1d56\u02b3\u02e2\u1d57\u1d58\u1d5b\u02b7\u02e3\u02b8\u1dbb"
    "\u1d2c\u1d2e\u1d30\u1d31\u1d33\u1d34\u1d35\u1d36\u1d37\u1d38\u1d39\u1d3a\u1d3c\u1d3e"
    "\u1d3f\u1d40\u1d41\u2c7d\u1d42"
)
_SUB_PLAIN = "0123456789+-\u2212=()aehijklmnoprstuvx"
_SUB_CHARS = (
    "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089\u208a\u208b\u208b\u208c\u208d\u208e"
    "\u2090\u2091\u2095\u1d62\u2c7c\u2096\u2097\u2098\u2099\u2092\u209a\u1d63\u209b\u209c"
    "\u1d64\u1d65\u2093"
)
SUPERSCRIPTS: dict[str, str] = dict(zip(_SUPER_PLAIN, _SUPER_CHARS, strict=True))
"""Character → its Unicode superscript (the character whose compatibility decomposition is
``<super>`` of it; hyphen-minus and minus sign both → U+207B)."""
SUBSCRIPTS: dict[str, str] = dict(zip(_SUB_PLAIN, _SUB_CHARS, strict=True))
"""Character → its Unicode subscript (``<sub>`` decomposition; ``-`` and U+2212 → U+208B)."""
_NOTATION = {"sup": "^", "sub": "_"}
_SCRIPT_TAGS = frozenset(_NOTATION)
_MATH_SCRIPTS = {"msup": ("sup",), "msub": ("sub",), "msubsup": ("sub", "sup")}
_PLAIN_OF = {
    **{c: p for p, c in SUPERSCRIPTS.items() if p != "\u2212"},
    **{c: p for p, c in SUBSCRIPTS.items() if p != "\u2212"},
}
_PLAIN_TABLE = {ord(c): p for c, p in _PLAIN_OF.items()}
_NOTATION_RUN = re.compile(r"[\^_]\(")


def plain_scripts(text: str) -> str:
    """``text`` with every character of :data:`SUPERSCRIPTS` / :data:`SUBSCRIPTS` as its plain
    character (same length; the ``^(…)`` notation is left as it is)."""
    return text.translate(_PLAIN_TABLE)


def script(content: str, kind: str) -> str:
    """``content`` of a ``<sup>`` (``kind="sup"``) or ``<sub>`` (``"sub"``) as stored text:
    Unicode script characters when every character has one, else ``^(content)`` /
    ``_(content)``; whitespace runs collapsed, edge whitespace kept outside; empty → empty."""
    collapsed = _WS.sub(" ", content)
    inner = collapsed.strip(" ")
    if not inner:
        return collapsed
    lead = " " if collapsed.startswith(" ") else ""
    trail = " " if collapsed.endswith(" ") else ""
    table = SUPERSCRIPTS if kind == "sup" else SUBSCRIPTS
    if all(c in table for c in inner):
        written = "".join(table[c] for c in inner)
    else:
        written = f"{_NOTATION[kind]}({inner})"
    return lead + written + trail


def flatten_scripts(text: str) -> tuple[str, list[int]]:
    """``text`` with superscript/subscript characters as their plain character and the
    ``^(…)`` / ``_(…)`` notation as its content (the first ``)`` closes it), plus, for each
    character of the result, its offset in ``text`` (and one more entry: ``len(text)``)."""
    if _NOTATION_RUN.search(text) is None:  # character for character (most texts)
        return text.translate(_PLAIN_TABLE), list(range(len(text) + 1))
    flat: list[str] = []
    where: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if _NOTATION_RUN.match(text, i):
            close = text.find(")", i + 2)
            if close > i + 2:
                for j in range(i + 2, close):
                    flat.append(text[j])
                    where.append(j)
                i = close + 1
                continue
        char = text[i]
        flat.append(_PLAIN_OF.get(char, char))
        where.append(i)
        i += 1
    where.append(n)
    return "".join(flat), where


def text_of(element: Element | None, *, skip: Iterable[str] = ()) -> str:
    """All text inside ``element`` (inline markup kept as text), whitespace collapsed;
    superscripts and subscripts kept (:func:`script`).

    ``skip`` names child elements (local names) whose text is left out, e.g. tables.
    """
    if element is None:
        return ""
    if type(element) is _ELEMENT and not len(element):
        return clean(element.text or "")  # a leaf element (most calls): no walk needed
    skipped = frozenset(skip)
    parts: list[str] = []

    def inner(node: Element) -> str:
        """The text inside ``node`` (not its tail), scripts written by :func:`script`."""
        mark = len(parts)
        if isinstance(node.tag, str) and node.text:
            parts.append(node.text)
        for child in node:
            walk(child)
        text = "".join(parts[mark:])
        del parts[mark:]
        return text

    def walk(node: Element) -> None:
        name = local(node.tag)
        if name in skipped:
            pass
        elif name in _SCRIPT_TAGS:
            parts.append(script(inner(node), name))
        elif name in _MATH_SCRIPTS and len(node) == len(_MATH_SCRIPTS[name]) + 1:
            base, *scripts = list(node)
            parts.append(inner(base))
            parts.extend(
                script(inner(s), k) for s, k in zip(scripts, _MATH_SCRIPTS[name], strict=True)
            )
        else:
            parts.append(inner(node))
        if node.tail:
            parts.append(node.tail)

    parts.append(inner(element))
    return clean("".join(parts))


def clean(text: str) -> str:
    """Collapse ASCII whitespace runs to one space and strip (NBSP and friends are kept)."""
    # without a tab, newline, CR, VT, FF or double space _WS.sub would change nothing; a
    # short text is checked by isprintable() (one call), a long one by five memchr scans
    if "  " not in text:
        if len(text) < _SHORT:
            if text.isprintable():
                return text.strip()
        elif (
            "\n" not in text
            and "\t" not in text
            and "\r" not in text
            and "\x0b" not in text
            and "\x0c" not in text
        ):
            return text.strip()
    return _WS.sub(" ", text).strip()


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_JSON_DEPTH = 64
"""Arrays and objects nested deeper than this are refused (no API we read nests past ~12)."""
_TOO_DEEP = "expected {what} but the JSON is nested deeper than {limit} levels"


def _replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate (``"\\ud800"`` in JSON) as U+FFFD: such a string
    cannot be encoded as UTF-8, so it could be neither hashed nor stored."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_lone_surrogates(k): _replace_lone_surrogates(v) for k, v in value.items()}
    return value


def load_json(body: str | bytes, *, what: str) -> Any:
    """Parse an untrusted JSON body. An HTML page, an empty or malformed body, or one nested
    deeper than :data:`MAX_JSON_DEPTH` → ParseError. Lone surrogate escapes become U+FFFD (a
    pair escaped as two ``\\u`` codes stays one character)."""
    data = _as_bytes(body)
    if not data.strip():
        raise ParseError(f"expected {what} but the body is empty")
    reject_html(data, what)
    try:
        return decode_json(data, what=what)
    except ValueError as error:
        first = data.lstrip()[:1]
        if first == b"<":
            raise ParseError(f"expected {what} but got XML or markup, not JSON") from None
        message = _WS.sub(" ", str(error)).strip()
        raise ParseError(f"expected {what} but the JSON is malformed: {message}") from None


def decode_json(body: str | bytes, *, what: str) -> Any:
    """``json.loads`` for untrusted text, bounded: nesting deeper than :data:`MAX_JSON_DEPTH`
    is a ParseError (measured in one linear pass before parsing, so it never recurses;
    :func:`audit.json_depth.nesting_depth`), and lone surrogates become U+FFFD. Malformed
    JSON raises ``ValueError`` (``json.JSONDecodeError``), for callers that word that error
    themselves; :func:`load_json` does it for the rest."""
    text = body if isinstance(body, str) else _decode(body)
    if nesting_depth(text, limit=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ParseError(_TOO_DEEP.format(what=what, limit=MAX_JSON_DEPTH))
    try:
        value = json.loads(text)
    except RecursionError:  # defence in depth: the scan above should have refused it
        raise ParseError(_TOO_DEEP.format(what=what, limit=MAX_JSON_DEPTH)) from None
    return _replace_lone_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


def _decode(data: bytes) -> str:
    """The text of a JSON body as ``json.loads`` decodes bytes (UTF-8, or the UTF-16/32 its
    first bytes show), so the depth scan reads the same characters the parser will."""
    return data.decode(json.detect_encoding(data), "surrogatepass")
