"""Module docstrings as the text ``describe_contract`` gives a model: the handle grammar and
the quote-folding steps are read from :mod:`audit.handles` and :mod:`audit.folding` (one
source of truth) and stripped of reST markup a model has no use for: roles (``:data:`X```),
double-backtick literals and constant names in parentheses (``(PINNED_SCHEMES)``).
"""

from __future__ import annotations

import re

_MARKUP = (
    (re.compile(r"\s*\(:\w+:`[^`]+`\)"), ""),  # "(:data:`FOLD_TABLE`)": a pointer, dropped
    (re.compile(r":\w+:`~?(?:[\w.]*\.)?([^`.]+)`"), r"\1"),  # ":func:`fold`" -> "fold"
    (re.compile(r"``(.+?)``"), r"\1"),  # "``-``" -> "-"
    (re.compile(r"\s*\([A-Z][A-Z0-9_]+\)"), ""),  # "(PINNED_SCHEMES)": a constant's name
)


def plain_text(doc: str) -> str:
    """Docstring text as a model reads it: no reST roles, literals or constant names."""
    for pattern, replacement in _MARKUP:
        doc = pattern.sub(replacement, doc)
    return doc


def doc_block(doc: str | None, after: str) -> str:
    """The indented block that follows the line ending in ``after`` in a module docstring."""
    text = doc or ""
    start = text.index(after) + len(after)
    block = re.match(r"\s*\n((?:(?: {4}.*)?\n)+)", text[start:])
    lines = (block.group(1) if block else "").splitlines()
    return plain_text("\n".join(line[4:] for line in lines).strip())


def folding_steps(doc: str | None) -> str:
    text = doc or ""
    return plain_text(text[text.index("1. ") : text.index("Step 2 runs")].strip())
