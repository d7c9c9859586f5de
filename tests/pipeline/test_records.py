"""Record.content_hash: the exact hashes of snapshots already built must never change.

The hashes pinned below were computed with the original implementation (``model_dump(mode=
"json")`` → ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` →
sha256), before the fast path existed. A changed hash would give every record of every lineage
a spurious new version at the next build.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from pipeline.records import Flags, Passage, Record, Relation


def reference_hash(record: Record) -> str:
    """The original definition, spelled out here so the test does not trust the code."""
    payload = record.model_dump(mode="json", exclude={"annotations"})
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _article() -> Record:
    abstract = [
        Passage(path=f"abstract.{i}", section=label, text=f"{label.title()} of zentravir {i}.")
        for i, label in enumerate(("BACKGROUND", "METHODS", "RESULTS"), start=1)
    ]
    return Record(
        record_id="pmid:99000001",
        source="pubmed",
        title="Zentravir in Farrow syndrome (synthetic)",
        doi="10.5555/pinned.1",
        pmid="99000001",
        pmcid="PMC99000001",
        year=2024,
        journal="Journal of Invented Medicine",
        authors=["Synth A", "Invented Group"],
        publication_types=["Journal Article", "Randomized Controlled Trial"],
        status="MEDLINE",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=[
            Passage(path="title", section="Title", text="Zentravir in Farrow syndrome"),
            *abstract,
        ],
        metadata={"publication_status": "epublish"},
    )


def _book() -> Record:
    return Record(
        record_id="pmid:99000002",
        source="pubmed",
        title="Farrow Syndrome (synthetic chapter)",
        pmid="99000002",
        year=2021,
        journal="FarrowReviews (synthetic)",
        authors=["Chapterwright N"],
        publication_types=["Review"],
        content_type="book_chapter",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=[Passage(path="abstract.1", section="DIAGNOSIS/TESTING", text="Invented.")],
        metadata={"book_title": "FarrowReviews (synthetic)", "publisher": "Invented Press"},
    )


def _relations() -> Record:
    return Record(
        record_id="pmid:99000003",
        source="pubmed",
        title="A retracted invented trial",
        pmid="99000003",
        flags=Flags(retracted=True, expression_of_concern=True, preprint=None),
        relations=[
            Relation(kind="retraction_in", target="pmid:99000004", source="pubmed"),
            Relation(
                kind="erratum_in",
                target="doi:10.5555/erratum.1",
                source="crossref",
                detail="J Invented Med. 2024;1:2",
                date="2024-05-01",
            ),
        ],
        passages=[Passage(path="title", section="Title", text="A retracted invented trial")],
    )


def _unknown_flags_and_unicode() -> Record:
    text = 'Zentravir\u00a0dose "1\\2"\tµg — 治験 😀 \x01 end\n\u2028'
    return Record(
        record_id="ppr:PPR99000001",
        source="europepmc",
        version="2",
        version_date="2024-02-03",
        title=text,
        authors=["Ñúñez É", "Ωmega Ψ"],
        content_type="preprint",
        flags=Flags(preprint=True),
        passages=[Passage(path="abstract.1", section="Résumé", text=text)],
        metadata={"clé": "välue", "emoji😀": ["\u00e9", "\x7f"]},
    )


def _nested_metadata() -> Record:
    return Record(
        record_id="doi:10.5555/nested",
        source="crossref",
        metadata={
            "zeta": {"b": [1, None, True, False, "x", {"k": -3, "a": []}], "a": {}},
            "alpha": None,
            "big": 10**20,
            "count": 0,
            "list": [[], [{}], "s"],
        },
    )


def _registry() -> Record:
    return Record(
        record_id="nct:NCT99000001",
        source="clinicaltrials",
        version="2025-06-02",
        version_date="2025-06-02",
        title="A synthetic trial of zentravir in Farrow syndrome",
        year=2025,
        content_type="trial",
        status="COMPLETED",
        flags=Flags(),
        passages=[
            Passage(path="brief_summary", section="Brief Summary", text="Invented summary."),
            Passage(path="outcome.1", section="Primary Outcome", text="Flares at week 12."),
        ],
        metadata={
            "phases": ["PHASE2", "PHASE3"],
            "enrollment": {"count": 120, "type": "ACTUAL"},
            "has_results": True,
            "projection": None,
        },
    )


def _minimal() -> Record:
    return Record(record_id="setid:5eed0000-0000-0000-0000-000000000001", source="openfda")


def _float_metadata() -> Record:
    # floats take the reference path (JSON float spelling differs between encoders)
    return Record(
        record_id="doi:10.5555/floats",
        source="crossref",
        metadata={"score": 12.5, "tiny": 1e-7, "huge": 1e16, "inf": float("inf")},
    )


PINNED: dict[str, tuple[Any, str]] = {
    "article": (
        _article,
        "7d187bfa9992740c82b921e05766db460a1b7e106400ec3afe22c10903f5c231",
    ),
    "book": (
        _book,
        "5c3445cdec28307f70aca3c8f3adf78da7d572919f7d16fc72f7093076729e62",
    ),
    "relations": (
        _relations,
        "5656d25da8e26d5046d6298dceee2aeb9e22c729d04ef29373a1327bd4ef5fca",
    ),
    "unknown_flags_and_unicode": (
        _unknown_flags_and_unicode,
        "495cd6418e37ed36d590fc9622091636110129a4405052ec6638bd0d1584de00",
    ),
    "nested_metadata": (
        _nested_metadata,
        "476ac4562482ecf680ad4fe8ddfa86b5560d21ebe916676693dc273b85b3d5d4",
    ),
    "registry": (
        _registry,
        "323cbe04e864c92514b324fa100668a89401523eade42c50618f349edb454031",
    ),
    "minimal": (
        _minimal,
        "31c11a94fb2bbfb9daa0aa12ad2dd35d23ce7d27a138c74194684dffd4dfb173",
    ),
    "float_metadata": (
        _float_metadata,
        "6c36f8b36133f40f2be73e68b744f0d28e5b4235d519f381f6e0f57b14b54004",
    ),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_content_hash_is_pinned(name: str) -> None:
    build, expected = PINNED[name]
    record = build()
    assert reference_hash(record) == expected
    assert record.content_hash() == expected
