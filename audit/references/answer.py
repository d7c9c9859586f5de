"""The ordinary references of an answer, checked inside ``citeseal audit`` (pure apart from the
resolver's lookups).

Rules:

- An answer's **ordinary references** are what ``citeseal check`` would find in it read as
  Markdown (:mod:`audit.references.entries`: reference-list entries, identifiers in running
  text), once its handle citations are taken out: every handle span the citation parser found
  (:attr:`audit.citations.Citation.handle_span`, malformed handles included) is blanked with
  spaces first, so ``pmid:99000001/abstract~x3k9q`` is a citation, never also a PMID, and every
  position in the report is still the answer's own line and column.
- A reference-list entry that held a handle and has no identifier of its own once the handle is
  blanked is that handle's entry (already audited as a citation), not an ordinary reference.
- Claims JSON has no answer text: its references are read from its sentences, one per line
  (a claim's sentence rarely holds one; its citations are handles), each handle-looking token
  written in them (:func:`audit.citation_scan.find_candidates`, what the claims parser cites)
  blanked as in an answer.
- The check is :func:`audit.references.check.check_document`'s, against the resolver of the same
  snapshot, so a reference gets in an audit exactly the tier ``citeseal check`` gives it.
- :func:`recheck` checks a published report's references again (``citeseal reaudit``) from
  the references as read, which the report keeps: no answer text is needed.
- An answer without ordinary references has no section (None): its report is as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from audit.citation_scan import find_candidates
from audit.references.check import check_documents
from audit.references.entries import extract_document
from audit.references.inputs import Input, SourceText
from audit.references.model import ExtractedDocument, Reference
from audit.references.resolve import Resolver
from audit.report import AuditedReference, ReferencesSection


def blank_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each ``(start, end)`` span replaced by spaces (line breaks kept)."""
    chars = list(text)
    for start, end in spans:
        for i in range(max(0, start), min(end, len(chars))):
            if chars[i] not in "\r\n":
                chars[i] = " "
    return "".join(chars)


def _overlaps(ref: Reference, spans: Sequence[tuple[int, int]], lines: list[int]) -> bool:
    """True when a handle span starts on one of the lines the reference covers."""
    first, last = ref.span.line, ref.span.end_line
    return any(first <= _line_of(start, lines) <= last for start, _ in spans)


def _line_of(offset: int, lines: list[int]) -> int:
    """1-based line of ``offset`` (``lines``: the offset each line starts at)."""
    low, high = 0, len(lines)
    while low + 1 < high:
        mid = (low + high) // 2
        if lines[mid] <= offset:
            low = mid
        else:
            high = mid
    return low + 1


def answer_references(
    text: str, label: str, handle_spans: Sequence[tuple[int, int]]
) -> ExtractedDocument:
    """The ordinary references of an answer's ``text`` (module docstring)."""
    blanked = blank_spans(text, handle_spans)
    document = extract_document(Input(SourceText(label, "markdown", blanked)))
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    kept = tuple(
        ref
        for ref in document.references
        if ref.identifiers or not (ref.kind == "entry" and _overlaps(ref, handle_spans, starts))
    )
    return document.model_copy(update={"references": kept})


def sections_of(
    answers: Sequence[tuple[Sequence[Reference], str]], resolver: Resolver
) -> list[ReferencesSection | None]:
    """Each answer's ``(references, label)`` checked, the identifier look-ups of all of them in
    one batch, as report sections (None for an answer without references)."""
    documents = [
        ExtractedDocument(file=label, format="markdown", references=tuple(references))
        for references, label in answers
        if references
    ]
    checked = iter(check_documents(documents, resolver))
    sections: list[ReferencesSection | None] = []
    for references, _ in answers:
        if not references:
            sections.append(None)
            continue
        document = next(checked)
        items = [
            AuditedReference(reference=ref, check=check)
            for ref, check in zip(references, document.references, strict=True)
        ]
        sections.append(ReferencesSection(counts=document.counts, references=items))
    return sections


def section_of(
    references: Sequence[Reference], label: str, resolver: Resolver
) -> ReferencesSection | None:
    """The checked references as a report section; None when there are none."""
    return sections_of([(references, label)], resolver)[0]


def answer_references_of(
    text: str | None,
    sentences: Iterable[str],
    handle_spans: Sequence[tuple[int, int]],
    label: str,
) -> tuple[Reference, ...]:
    """The ordinary references of one answer: from its ``text`` with its handles blanked, or,
    without a text (claims JSON), from its ``sentences`` one per line."""
    if text is None:
        text = "\n".join(s.replace("\n", " ") for s in sentences)
        handle_spans = [(c.start, c.end) for c in find_candidates(text)]
    return answer_references(text, label, handle_spans).references


def recheck(
    section: ReferencesSection | None, label: str, resolver: Resolver
) -> ReferencesSection | None:
    """A published report's references checked again against ``resolver``'s snapshot."""
    if section is None:
        return None
    return section_of([item.reference for item in section.references], label, resolver)
