"""The id of a ``local:`` record: a file's path inside the folder given, as handle-safe ASCII.

A ``local:`` record is one of the user's own documents (``pipeline/sources/local.py``). Its id
is the file's path relative to the folder, written with exactly one spelling::

    local-id = char+                                (at most MAX_LOCAL_ID_CHARS characters)
    char     = unreserved | "%" HEXDIG HEXDIG       (upper-case hex digits)
    unreserved = [A-Za-z0-9._-]

* the relative path is NFC-normalised Unicode with ``/`` between folders (so the same file has
  the same id on Linux, macOS and Windows, and across rebuilds);
* every UTF-8 byte of it outside ``unreserved`` is written ``%XX`` (upper-case hex): the
  folder separator ``/`` is ``%2F``, a space ``%20``, ``é`` ``%C3%A9``; ``@`` and ``~``, which
  end an id in a handle, are ``%40`` and ``%7E``;
* nothing else is encoded: ``%41`` (an encoded ``A``) or ``%2f`` (lower-case hex) is another
  spelling and is refused, and so is an id that decodes to invalid UTF-8, to text that is not
  NFC, to an empty folder part, to ``.`` or ``..``, or to a part starting with ``.`` (hidden
  files are never ingested).

``reports/Q1 summary.md`` → ``reports%2FQ1%20summary.md``; ``report-2024.pdf`` stays as it is.
Pure functions: :func:`encode_local_id` and :func:`decode_local_id` are inverse, and
:func:`local_id_problem` says why a text is no id (None: it is one).
"""

from __future__ import annotations

import re
import unicodedata

MAX_LOCAL_ID_CHARS = 90
"""So a record id (``local:`` + id) fits the 100 characters every door takes, and the longest
handle (a 40-character version, a 200-character path) the 400 of ``support`` and ``serve``."""
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SHAPE = re.compile(r"(?:[A-Za-z0-9._-]|%[0-9A-F]{2})+")
_ESCAPE = re.compile(r"%([0-9A-F]{2})")
LOCAL_ID_RULE = (
    "local id must be the file's path relative to the folder, with every byte outside "
    "A-Z a-z 0-9 . _ - written %XX (upper-case hex)"
)


def encode_local_id(relative: str) -> str:
    """The id of the file at ``relative`` (``/`` between folders), NFC-normalised first."""
    text = unicodedata.normalize("NFC", relative)
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8"))


def decode_local_id(ident: str) -> str:
    """The relative path an id names (the inverse of :func:`encode_local_id`).

    Raises ValueError when ``ident`` is not an id (:func:`local_id_problem`)."""
    problem = local_id_problem(ident)
    if problem is not None:
        raise ValueError(problem)
    return _decoded(ident)


def _decoded(ident: str) -> str:
    raw = bytearray()
    pos = 0
    while pos < len(ident):
        if ident[pos] == "%":
            raw.append(int(ident[pos + 1 : pos + 3], 16))
            pos += 3
        else:
            raw.append(ord(ident[pos]))
            pos += 1
    return raw.decode("utf-8")


def local_id_problem(ident: str) -> str | None:
    """Why ``ident`` is not a local id (one sentence), or None when it is one."""
    if not _SHAPE.fullmatch(ident):
        return LOCAL_ID_RULE
    if len(ident) > MAX_LOCAL_ID_CHARS:
        return f"local id is {len(ident)} characters long (at most {MAX_LOCAL_ID_CHARS})"
    for match in _ESCAPE.finditer(ident):
        byte = int(match.group(1), 16)
        if byte in _UNRESERVED:
            return f"{match.group()} encodes {chr(byte)!r}, which is written as is"
    try:
        path = _decoded(ident)
    except UnicodeDecodeError:
        return "local id does not decode to UTF-8 text"
    if unicodedata.normalize("NFC", path) != path:
        return "local id does not decode to NFC text (the same name has another spelling)"
    for part in path.split("/"):
        if not part or part.startswith("."):
            return (
                f"local id names an empty, '.'-led or hidden path part (got {part!r} in {path!r})"
            )
    return None
