"""What the server says about itself: ``describe_contract`` and ``snapshot_info``.

The contract (:func:`contract`) is read from the code that enforces it: the handle grammar
from :mod:`audit.handles`' docstring, the verdict ladder and flags from :mod:`audit.report`,
quote folding from :mod:`audit.folding`, every limit from the constant a tool checks
(:func:`limits`). The snapshot's identity (:func:`identity`) carries no local path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from audit import CONTRACT_VERSION, folding, handles
from audit.citations import MAX_ANSWER_CHARS, MAX_CITATIONS_PER_SENTENCE, MAX_QUOTE_CHARS
from audit.claims import MAX_CLAIMS_BYTES
from audit.report import DEFAULT_FAIL_ON, FAIL_ON_ITEMS, FLAG_NAMES, VERDICTS
from audit.support.run import MAX_CLAIM_CHARS, MAX_SUPPORT_HANDLE_CHARS, MAX_SUPPORT_HANDLES
from pipeline.serve.cursor import MAX_CURSOR_CHARS
from pipeline.serve.doc_text import doc_block, folding_steps
from pipeline.serve.served import SERVED_CHANGE, Served
from pipeline.serve.service import (
    MAX_HANDLE_CHARS,
    MAX_HANDLES,
    MAX_PASSAGES,
    MAX_RECORDS,
    MAX_RESULTS,
    Outcome,
)
from pipeline.snapshot.search import MAX_QUERY_CHARS

CITING_RULES = (
    "Never invent a handle, never edit one, never build one from a record id: fetch it. "
    "search_literature, search_trials, search_drug_labels and fetch_passages return "
    "handles; copy them character for character.",
    "Put the citation right after the claim it supports, in square brackets: [HANDLE], "
    'or with a quote [HANDLE "exact words"].',
    "One quote per handle, copied verbatim from that passage: only typography, spacing "
    "and invisible characters are forgiven, never a changed word, number or unit. To "
    'quote two passages, cite two handles: [HANDLE_1 "words"; HANDLE_2 "words"].',
    "Cite a passage only for what it says. If a passage is flagged retracted, "
    "expression_of_concern or preprint, say so in your answer.",
    "Before you give the answer, call audit_answer on it and fix every citation that is not ok.",
)
"""How to cite, in order: the ``cite_by_handle`` prompt numbers them, ``describe_contract``
carries them (``citing_rules``). Handles appear only as placeholders the grammar rejects."""
INSTRUCTIONS = (
    "Evidence from one frozen, sealed snapshot of biomedical sources. Search, fetch passages, "
    "and cite each claim with the passage's handle copied exactly, optionally with an exact "
    'quote: [HANDLE "words"]. Handles are checkable forever against this snapshot; a handle '
    "you invent or edit is detected as forged. Call describe_contract for the rules and "
    "audit_answer to check an answer before you give it."
)
"""The server's ``instructions`` (sent at initialize), also in ``describe_contract``."""

VERDICT_MEANINGS: dict[str, str] = {
    "malformed": "the handle does not parse under the grammar",
    "forged": "the check code does not verify under the key (invented or altered handle)",
    "unavailable": "the record or passage is not in this snapshot, or its source did not "
    "harvest completely",
    "withdrawn": "the record was withdrawn upstream",
    "quote_mismatch": "the quote is not in the passage (after folding)",
    "ok": "the handle verifies and the quote (if any) is in the passage",
}
"""One line per verdict, in ladder order (the first that applies wins)."""


class SnapshotIdentity(BaseModel):
    name: str
    snapshot_id: str
    file: str
    sha256: str
    created_at: str
    seal: str = Field(description="sealed (installation key) or demo (public key: proves nothing)")
    demo_key: bool = Field(description="Handles this server mints use the public demo key.")


class SnapshotInfo(BaseModel):
    identity: SnapshotIdentity
    parent: str | None
    mode: str
    records: int
    versions: int
    passages: int
    partial: bool
    failed_requests: int
    sources: dict[str, dict[str, Any]]


class Contract(BaseModel):
    contract_version: str
    instructions: str = Field(description="The server's instructions: what it is, how to cite.")
    citing_rules: list[str] = Field(description="How to cite, in order.")
    grammar: str
    schemes: list[str]
    pinned_schemes: list[str]
    verdicts: list[dict[str, str]] = Field(description="The ladder: the first that applies wins.")
    flags: list[str]
    fail_on: list[str]
    default_fail_on: list[str]
    folding: str
    limits: dict[str, int]
    snapshot: SnapshotIdentity


def identity(served: Served) -> SnapshotIdentity:
    trusted = served.trusted
    manifest = trusted.manifest
    return SnapshotIdentity(
        name=manifest.name,
        snapshot_id=manifest.snapshot_id,
        file=trusted.path.name,
        sha256=trusted.sha256,
        created_at=manifest.created_at,
        seal=trusted.seal,
        demo_key=served.keyring.demo,
    )


def _identity_text(ident: SnapshotIdentity) -> str:
    seal = "sealed with the PUBLIC demo key (proves nothing)" if ident.seal == "demo" else "sealed"
    return (
        f"snapshot {ident.name} {ident.snapshot_id} ({ident.file}, sha256 {ident.sha256[:16]}…, "
        f"created {ident.created_at}; {seal})"
    )


def info(served: Served) -> Outcome:
    """What the served snapshot holds (its manifest, without any local path)."""
    served.trusted.still_unchanged(**SERVED_CHANGE)
    manifest = served.trusted.manifest
    ident = identity(served)
    value = SnapshotInfo(
        identity=ident,
        parent=manifest.parent.snapshot_id if manifest.parent else None,
        mode=manifest.mode,
        records=manifest.records,
        versions=manifest.versions,
        passages=manifest.passages,
        partial=manifest.partial,
        failed_requests=len(manifest.failed_requests),
        sources={name: s.model_dump() for name, s in manifest.sources.items()},
    )
    lines = [
        _identity_text(ident),
        f"{manifest.records} records, {manifest.versions} versions, {manifest.passages} passages"
        + ("; PARTIAL: some requests failed" if manifest.partial else ""),
    ]
    lines += [f"  {name}: {s.status}, {s.records} records" for name, s in manifest.sources.items()]
    return Outcome(value, "\n".join(lines))


def limits() -> dict[str, int]:
    """Every limit a tool enforces, from the constants that enforce it."""
    from pipeline.serve.reaudit import MAX_REPORT_CHARS  # reaudit imports this module
    from pipeline.serve.references import MAX_CHECK_CHARS  # and so does references

    return {
        "query_chars": MAX_QUERY_CHARS,
        "search_results": MAX_RESULTS,
        "fetch_records": MAX_RECORDS,
        "fetch_passages_per_record": MAX_PASSAGES,
        "resolve_handles": MAX_HANDLES,
        "handle_chars": MAX_HANDLE_CHARS,
        "quote_chars": MAX_QUOTE_CHARS,
        "answer_chars": MAX_ANSWER_CHARS,
        "claims_chars": MAX_CLAIMS_BYTES,
        "citations_per_sentence": MAX_CITATIONS_PER_SENTENCE,
        "support_claim_chars": MAX_CLAIM_CHARS,
        "support_handles": MAX_SUPPORT_HANDLES,
        "support_handle_chars": MAX_SUPPORT_HANDLE_CHARS,
        "report_chars": MAX_REPORT_CHARS,
        "check_chars": MAX_CHECK_CHARS,
        "cursor_chars": MAX_CURSOR_CHARS,
    }


def contract(served: Served) -> Outcome:
    """The citation contract this server checks against, and the snapshot's identity."""
    served.trusted.still_unchanged(**SERVED_CHANGE)
    ident = identity(served)
    value = Contract(
        contract_version=CONTRACT_VERSION,
        instructions=INSTRUCTIONS,
        citing_rules=list(CITING_RULES),
        grammar=doc_block(
            handles.__doc__,
            "Grammar (every handle has exactly one spelling; nothing is case-folded)::",
        ),
        schemes=list(handles.SCHEMES),
        pinned_schemes=sorted(handles.PINNED_SCHEMES),
        verdicts=[{"verdict": v, "meaning": VERDICT_MEANINGS[v]} for v in VERDICTS],
        flags=list(FLAG_NAMES),
        fail_on=list(FAIL_ON_ITEMS),
        default_fail_on=list(DEFAULT_FAIL_ON),
        folding=folding_steps(folding.__doc__),
        limits=limits(),
        snapshot=ident,
    )
    lines = [
        f"citeseal contract {CONTRACT_VERSION}: cite a passage by its handle, optionally with "
        'an exact quote: [HANDLE "words"]. Copy handles exactly; never invent or edit one.',
        INSTRUCTIONS,
        "how to cite:",
        *[f"{n}. {rule}" for n, rule in enumerate(CITING_RULES, start=1)],
        "grammar:",
        value.grammar,
        "verdicts (first that applies wins): "
        + "; ".join(f"{v['verdict']} = {v['meaning']}" for v in value.verdicts),
        f"flags on ok citations: {', '.join(value.flags)}",
        "quotes match after folding (typography, whitespace, invisible characters only):",
        value.folding,
        "limits: " + ", ".join(f"{k} {v:,}" for k, v in value.limits.items()),
        _identity_text(ident),
    ]
    return Outcome(value, "\n".join(lines))
