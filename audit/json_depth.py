"""How deeply a JSON text nests, measured in one linear pass before anything parses it.

``json.loads`` recurses once per array or object, so a body of 100,000 ``[`` ends in a
``RecursionError`` rather than a syntax error; every reader of untrusted JSON (claims files in
``audit/``, API answers in ``pipeline/``) measures the depth first with :func:`nesting_depth`.

The scan visits the text once, left to right: each step matches one mark of at most two
characters (a backslash escape, a quote, a bracket), so no step looks back or ahead and the
cost is linear in the length of the text, whatever it holds. It counts the deepest nesting
*reached*, whether or not the brackets are closed again: an unbalanced ``[[[[`` is as deep as
``[[[[]]]]``. Brackets inside strings do not count; an unterminated string hides what follows
it, which is safe because a parser stops at that string too.
"""

from __future__ import annotations

import re

_MARKS = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def nesting_depth(text: str | bytes, *, limit: int | None = None) -> int:
    """The deepest nesting of arrays and objects in ``text`` (0 for a scalar).

    With ``limit`` the scan stops as soon as the depth exceeds it and returns ``limit + 1``.
    Bytes are scanned byte by byte (right for UTF-8, where no byte of a multi-byte character
    is ASCII; decode other encodings first).
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # one character per byte: the marks stay where they are
    depth = deepest = 0
    in_string = False
    for mark in _MARKS.findall(text):
        if mark == '"':
            in_string = not in_string
        elif in_string or len(mark) == 2:
            continue  # a bracket inside a string, or an escape (a JSON error outside one)
        elif mark in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    return limit + 1
        else:
            depth -= 1
    return deepest
