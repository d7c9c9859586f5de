"""What reading a document yields: the references it holds and the identifiers in each.

Rules:

- A :class:`Span` is where a piece of text stands in the input *as the reader sees the file*:
  ``line`` and ``column`` are 1-based, ``end_line``/``end_column`` point just past the end
  (exclusive). For HTML they address the HTML source (entities and tags included); for PDF they
  address the page's text layer (``page`` is 1-based; other formats have ``page=None``).
- An :class:`Identifier` keeps the text as written (``raw``) and its normalised ``value``
  (docs/references.md has the rules per scheme). ``valid`` is false only when the text has the
  shape of the scheme but fails its own check (an ISBN check digit); ``problem`` then says what
  was seen and what was expected. An invalid identifier is reported, never dropped.
- A :class:`Reference` is one reference-list entry, one record of a structured file (BibTeX,
  RIS, CSL-JSON), or one identifier met in running text. An entry without any identifier is
  still a Reference (with no identifiers): nothing in a reference list is dropped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Scheme = Literal["doi", "pmid", "pmcid", "arxiv", "nct", "isbn"]
InputFormat = Literal["markdown", "text", "html", "bibtex", "ris", "csl-json", "pdf"]
ReferenceKind = Literal["entry", "record", "running_text"]
"""``entry``: an item of a reference list in prose; ``record``: a record of a structured file;
``running_text``: an identifier met outside any reference list."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Span(_Frozen):
    """Where a piece of text stands in one input (1-based; end exclusive)."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    page: int | None = None


class Identifier(_Frozen):
    """One identifier as written and as normalised."""

    scheme: Scheme
    value: str
    """Normalised for comparison (e.g. a DOI is case-folded, an ISBN is its ISBN-13)."""
    raw: str
    """The text exactly as it stands in the input (prefix and URL included)."""
    span: Span
    version: str | None = None
    """A version written with the identifier (arXiv ``v2``), kept apart from ``value``."""
    valid: bool = True
    problem: str | None = None
    """Why ``valid`` is false: what was seen and what was expected."""


class Reference(_Frozen):
    """One cited work as the document gives it."""

    kind: ReferenceKind
    label: str | None = None
    """The entry's number (``1`` for ``[1]``), or the BibTeX key / RIS ``ID`` / CSL ``id``."""
    identifiers: tuple[Identifier, ...] = ()
    title: str | None = None
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    raw: str
    """The entry's text as written (a running-text reference: its line)."""
    span: Span


class ExtractedDocument(_Frozen):
    """Every reference of one input, in the order they stand."""

    file: str
    format: InputFormat
    references: tuple[Reference, ...]

    @property
    def identifiers(self) -> tuple[Identifier, ...]:
        """Every identifier of every reference, in order."""
        return tuple(i for r in self.references for i in r.identifiers)
