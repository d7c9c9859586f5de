"""Typed reads of untrusted JSON for the parsers: a field of the wrong type is a ParseError.

An API answer is data, not a promise: ``"message": []`` where an object belongs, a number
where a list of strings belongs. Every field a parser touches is read through one of these
helpers, so a structural surprise becomes one :class:`~pipeline.errors.ParseError` that names
the source, the field path and what it got, never an ``AttributeError`` deep in a parser::

    crossref: message must be an object, got a list
    europepmc: resultList.result[3].authorList.author must be a list, got a string

Rules, the same for every source:

* ``obj``/``arr``: the value must be an object/array (absent is an error too).
* ``opt_obj``/``opt_arr``/``opt_str``/``opt_int``: absent (the key missing, or JSON ``null``)
  is allowed and reads as ``{}``/``[]``/``None``; any other type is an error.
* ``opt_id``: an identifier, which some APIs send as a number: a string or an integer
  (never a boolean or a float), as text.
* ``strs``: an array of strings (``null`` entries are skipped), absent reads as ``[]``.
* ``objs``: an array of objects with the path of each element (``…[3]``).

A path is a plain string (``"message.items[3]"``) built by :func:`key` and :func:`index`;
the source name is the prefix of the message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pipeline.errors import ParseError

JsonObject = dict[str, Any]


def kind(value: object) -> str:
    """What a JSON value is, for "got …" in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def snippet(value: object, limit: int = 200) -> str:
    """Upstream text quoted in an error message: on one line (every run of whitespace, line
    breaks included, is one space) and at most ``limit`` characters."""
    return " ".join(str(value).split())[:limit]


def key(path: str, name: str) -> str:
    """The path of field ``name`` under ``path`` (``message`` + ``items`` → ``message.items``)."""
    return f"{path}.{name}" if path else name


def index(path: str, n: int) -> str:
    """The path of element ``n`` of the array at ``path``."""
    return f"{path}[{n}]"


def wrong(source: str, path: str, expected: str, value: object) -> ParseError:
    """The error for a field of the wrong type."""
    return ParseError(f"{source}: {path or 'the body'} must be {expected}, got {kind(value)}")


def obj(source: str, path: str, value: object) -> JsonObject:
    if not isinstance(value, dict):
        raise wrong(source, path, "an object", value)
    return value


def opt_obj(source: str, path: str, value: object) -> JsonObject:
    if value is None:
        return {}
    return obj(source, path, value)


def arr(source: str, path: str, value: object) -> list[Any]:
    if not isinstance(value, list):
        raise wrong(source, path, "a list", value)
    return value


def opt_arr(source: str, path: str, value: object) -> list[Any]:
    if value is None:
        return []
    return arr(source, path, value)


def objs(source: str, path: str, value: object) -> Iterator[tuple[str, JsonObject]]:
    """``(path, object)`` for each element of an array of objects (absent: none)."""
    for n, item in enumerate(opt_arr(source, path, value)):
        where = index(path, n)
        yield where, obj(source, where, item)


def opt_str(source: str, path: str, value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise wrong(source, path, "a string", value)


def text(source: str, path: str, value: object) -> str:
    """A string field read as text: absent is ``""``."""
    return opt_str(source, path, value) or ""


def opt_int(source: str, path: str, value: object) -> int | None:
    """An integer, or a string of ASCII digits (an optional leading minus); absent is None."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        digits = value.strip()
        body = digits[1:] if digits.startswith("-") else digits
        if body.isascii() and body.isdigit() and len(body) <= 18:
            return int(digits)
    raise wrong(source, path, "an integer", value)


def opt_id(source: str, path: str, value: object) -> str | None:
    """An identifier: a string, or an integer written as text; absent is None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise wrong(source, path, "a string or an integer", value)


def strs(source: str, path: str, value: object) -> list[str]:
    """An array of strings (``null`` entries skipped); absent is ``[]``."""
    out: list[str] = []
    for n, item in enumerate(opt_arr(source, path, value)):
        if item is None:
            continue
        if not isinstance(item, str):
            raise wrong(source, index(path, n), "a string", item)
        out.append(item)
    return out
