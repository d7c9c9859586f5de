"""Reading documents and extracting every reference (the front half of ``citeseal check``).

:func:`read_document` reads one file (the only I/O); :func:`extract_bytes` does the same on
bytes already in hand (stdin, a fetched page). Both return an :class:`ExtractedDocument`.
Modules: :mod:`.identifiers` (grammars, normalisation), :mod:`.inputs` (formats, positions,
limits), :mod:`.structured` (BibTeX, RIS, CSL-JSON), :mod:`.entries` (reference lists,
metadata), :mod:`.model` (the pydantic models). docs/references.md states the rules.
"""

from __future__ import annotations

from pathlib import Path

from audit.references.entries import extract_document
from audit.references.inputs import MAX_INPUT_BYTES, format_for, parse_input, read_input
from audit.references.model import ExtractedDocument, Identifier, Reference, Span

__all__ = [
    "ExtractedDocument",
    "Identifier",
    "Reference",
    "Span",
    "extract_bytes",
    "read_document",
]


def read_document(
    path: Path, fmt: str | None = None, *, max_bytes: int = MAX_INPUT_BYTES
) -> ExtractedDocument:
    """Every reference in the file at ``path``, read in ``fmt`` (default: by extension)."""
    return extract_document(read_input(path, fmt, max_bytes=max_bytes))


def extract_bytes(
    data: bytes, name: str, fmt: str | None = None, *, max_bytes: int = MAX_INPUT_BYTES
) -> ExtractedDocument:
    """Every reference in ``data``; ``name`` names it in positions and errors."""
    return extract_document(parse_input(data, name, format_for(name, fmt), max_bytes=max_bytes))
