"""The labelled accuracy set of the reference check, and its per-tier precision and recall.

``python -m tests.audit.references.accuracy`` (``make check-accuracy``) builds a fixture
snapshot of :data:`WORKS` invented works (and a preprint of every fifth), writes the labelled
references twice — as one CSL-JSON document and as one Markdown reference list in Vancouver
style (prose: the metadata is read best effort) — checks each and prints precision and recall
per tier;
tests/audit/references/test_accuracy.py holds the floors (hallucinated precision ≥ 0.95).

Every work yields the same perturbations (``CASES``), each labelled with the tier a careful
reader would give it *offline*: an identifier absent from the snapshot is ``unresolved``, never
``hallucinated``. Everything is deterministic (no randomness): ids are out of real ranges
(DOI 10.5555/acc.*, PMIDs 99200000+, NCT992…).
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit.references import extract_bytes
from audit.references.check import TIERS, check_document
from audit.references.resolve import SnapshotResolver
from tests.audit.references.works import write_works

WORKS = 30
DRUGS = [
    "zelbarin",
    "quorvatide",
    "mestrelin",
    "havorex",
    "ulmotrin",
    "brendazol",
    "caprivast",
    "dovanel",
    "estrofen",
    "fulgarid",
    "gorsatin",
    "helminox",
    "ivatrel",
    "jorvapine",
    "kelstrin",
    "lumidor",
    "morvaxel",
    "nestrolin",
    "oprastat",
    "pelvatrin",
    "quintorex",
    "rovazine",
    "sulpharen",
    "tevolid",
    "umbrasil",
    "vantorel",
    "wexiprin",
    "xaltrodin",
    "yerbamox",
    "zintovar",
]
EFFECTS = ("reduces", "does not change", "increases", "modulates", "stabilises")
OUTCOMES = (
    "serum ferritin",
    "nocturnal blood pressure",
    "renal tubular injury",
    "migraine frequency",
    "hepatic fat content",
    "bone mineral density",
)
POPULATIONS = ("older adults", "children", "pregnant women", "athletes", "dialysis patients")
DESIGNS = ("a randomised trial", "a cohort study", "a case-control study", "a crossover trial")
SURNAMES = [
    "Abernathy",
    "Bellweather",
    "Castellano",
    "Dunmore",
    "Everhart",
    "Fairweather",
    "Galloway",
    "Hartigan",
    "Ingleby",
    "Jessup",
    "Kavanagh",
    "Lindqvist",
    "Montague",
    "Nakashima",
    "Okonkwo",
    "Pemberton",
    "Quinlan",
    "Rasmussen",
    "Sandoval",
    "Thackeray",
    "Uppington",
    "Valdivia",
    "Whitlock",
    "Xenakis",
    "Yardley",
    "Zeller",
]
JOURNALS = (
    ("Journal of Synthetic Medicine", "J Synth Med"),
    ("Archives of Invented Pharmacology", "Arch Invent Pharmacol"),
    ("Proceedings of the Fictional Society of Nephrology", "Proc Fict Soc Nephrol"),
    ("Synthetic Reviews in Geriatrics", "Synth Rev Geriatr"),
)


def work(i: int) -> dict[str, Any]:
    """Invented work ``i`` (0-based): distinct drug per work, so titles never collide."""
    names = [SURNAMES[(i * 3 + k) % len(SURNAMES)] for k in range(2 + i % 3)]
    return {
        "record_id": f"pmid:{99200000 + i}",
        "source": "pubmed",
        "title": (
            f"{DRUGS[i].capitalize()} {EFFECTS[i % 5]} {OUTCOMES[i % 6]} in "
            f"{POPULATIONS[i % 5]}: {DESIGNS[i % 4]}."
        ),
        "doi": f"10.5555/acc.{i:04d}",
        "pmid": str(99200000 + i),
        "pmcid": f"PMC{99200000 + i}" if i % 2 else None,
        "year": 2000 + i % 24,
        "journal": JOURNALS[i % 4][0],
        "authors": [f"{name} {chr(65 + (i + k) % 26)}" for k, name in enumerate(names)],
        "retracted": i % 7 == 0,
        "expression_of_concern": False,
        "preprint": False,
    }


def preprint(i: int) -> dict[str, Any]:
    """The preprint of work ``i``: same authors, an earlier wording of the title."""
    base = work(i)
    return {
        **base,
        "record_id": f"ppr:PPR99{i:04d}",
        "source": "europepmc",
        "title": f"Early evidence that {DRUGS[i]} affects {OUTCOMES[i % 6]} (preprint)",
        "doi": f"10.5555/acc.pre.{i:04d}",
        "pmid": None,
        "pmcid": None,
        "journal": "Synthetic Preprint Server",
        "retracted": False,
        "preprint": True,
    }


def all_works() -> tuple[dict[str, Any], ...]:
    main = [work(i) for i in range(WORKS)]
    return (*main, *(preprint(i) for i in range(0, WORKS, 5)))


def _item(w: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A CSL-JSON item citing ``w`` faithfully, with ``changes`` (None removes a field)."""
    authors = [{"family": a.rsplit(" ", 1)[0], "given": a.rsplit(" ", 1)[1]} for a in w["authors"]]
    item: dict[str, Any] = {
        "type": "article-journal",
        "title": w["title"].rstrip("."),
        "author": authors,
        "issued": {"date-parts": [[w["year"]]]},
        "container-title": w["journal"],
        "DOI": w["doi"],
    }
    item.update(changes)
    return {k: v for k, v in item.items() if v is not None}


_ET_AL = {"literal": "et al."}


def _swap(w: dict[str, Any]) -> list[dict[str, str]]:
    authors = _item(w)["author"]
    return [authors[1], authors[0], *authors[2:]]


def _near_title(w: dict[str, Any], i: int) -> str:
    return w["title"].rstrip(".").replace(OUTCOMES[i % 6], OUTCOMES[(i + 1) % 6])


Case = Callable[[int], tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Labelled:
    case: str
    label: str
    item: dict[str, Any]


def cases(i: int) -> list[Labelled]:
    """The labelled perturbations of work ``i`` (module docstring)."""
    w, other, third = work(i), work((i + 1) % WORKS), work((i + 2) % WORKS)
    stranger = [{"family": "Nobody", "given": "Q"}, {"family": "Noone", "given": "Z"}]
    out = [
        Labelled("exact-doi", "verified", _item(w)),
        Labelled(
            "pmid-abbreviated-online-first",
            "verified",
            _item(
                w,
                DOI=None,
                PMID=w["pmid"],
                **{"container-title": JOURNALS[i % 4][1]},
                issued={"date-parts": [[w["year"] + 1]]},
            ),
        ),
        Labelled("title-only", "verified", _item(w, DOI=None)),
        Labelled(
            "first-author-et-al", "verified", _item(w, author=[*_item(w)["author"][:1], _ET_AL])
        ),
        Labelled("upper-case-title", "verified", _item(w, title=w["title"].upper())),
        Labelled(
            "doi-as-upper-case-url",
            "verified",
            _item(w, DOI=None, URL=f"https://doi.org/{w['doi'].upper()}"),
        ),
        Labelled("near-miss-title", "mismatch", _item(w, title=_near_title(w, i))),
        Labelled("shifted-year", "mismatch", _item(w, issued={"date-parts": [[w["year"] - 4]]})),
        Labelled("wrong-venue", "mismatch", _item(w, **{"container-title": "Lancet Fiction"})),
        Labelled("wrong-doi", "mismatch", _item(w, DOI=other["doi"])),
        Labelled("invented-doi-real-title", "mismatch", _item(w, DOI=f"10.5555/acc.9{i:03d}")),
        Labelled(
            "chimeric-title-of-one-doi-of-another",
            "hallucinated",
            _item(w, DOI=other["doi"], author=_item(third)["author"]),
        ),
        Labelled(
            "doi-of-another-invented-work",
            "hallucinated",
            _item(
                other,
                title=f"Quantum tunnelling of {DRUGS[i]} ions in graphene sheets",
                author=stranger,
                **{"container-title": "Invented Physics Letters"},
            ),
        ),
        Labelled(
            "invented-doi-invented-title",
            "unresolved",
            _item(
                w,
                DOI=f"10.5555/acc.8{i:03d}",
                title=f"Photosynthetic yield of {DRUGS[i]} shrubs",
                author=stranger,
            ),
        ),
        Labelled(
            "invented-pmid",
            "unresolved",
            _item(w, DOI=None, PMID=str(99300000 + i), title=f"Sleep and {DRUGS[i]} in owls"),
        ),
        Labelled(
            "impossible-nct",
            "hallucinated",
            _item(w, DOI=None, title=f"A trial of {DRUGS[i]}", note=f"NCT992{i:04d}"),
        ),
        Labelled("impossible-nct-on-a-real-work", "mismatch", _item(w, note=f"NCT992{i:04d}")),
        Labelled(
            "bad-isbn-check-digit",
            "hallucinated",
            {"type": "book", "title": f"The {DRUGS[i]} handbook", "ISBN": _bad_isbn(i)},
        ),
        Labelled(
            "book",
            "needs_review",
            {"type": "book", "title": f"The {DRUGS[i]} handbook", "ISBN": _isbn(i)},
        ),
        Labelled(
            "unindexed-guideline",
            "needs_review",
            {"type": "report", "title": f"Guideline on prescribing {DRUGS[i]} in primary care"},
        ),
    ]
    if len(w["authors"]) > 1:
        out.append(Labelled("swapped-authors", "mismatch", _item(w, author=_swap(w))))
    if i % 5 == 0:  # the published title and authors, the preprint's DOI
        out.append(
            Labelled("preprint-doi-for-published", "mismatch", _item(w, DOI=preprint(i)["doi"]))
        )
    return out


def _isbn12(i: int) -> str:
    return f"97899999{i:04d}"


def _check13(digits: str) -> int:
    return (10 - sum(int(c) * (1 if k % 2 == 0 else 3) for k, c in enumerate(digits)) % 10) % 10


def _isbn(i: int) -> str:
    return _isbn12(i) + str(_check13(_isbn12(i)))


def _bad_isbn(i: int) -> str:
    return _isbn12(i) + str((_check13(_isbn12(i)) + 1) % 10)


def labelled_set() -> list[Labelled]:
    return [case for i in range(WORKS) for case in cases(i)]


@dataclass(frozen=True)
class Scores:
    total: int
    precision: dict[str, float | None]
    recall: dict[str, float | None]
    confusion: Counter[tuple[str, str]]
    errors: list[tuple[str, str, str]]
    """(case, label, predicted) of every wrong prediction."""


def vancouver(item: dict[str, Any]) -> str:
    """One CSL item written as a Vancouver reference-list line (Markdown)."""
    authors = ", ".join(
        a.get("literal") or f"{a['family']} {a['given']}" for a in item.get("author", [])
    )
    parts = [authors if authors.endswith(".") else f"{authors}." if authors else ""]
    parts.append(f"{item['title']}.")
    year = item["issued"]["date-parts"][0][0] if "issued" in item else 2020
    if item.get("type") == "book":
        parts.append(f"Synthetic Press; {year}.")
    elif "container-title" in item:
        parts.append(f"{item['container-title']}. {year};1:2.")
    else:
        parts.append(f"{year}.")
    fields = (("DOI", "doi:"), ("PMID", "PMID: "), ("ISBN", "ISBN "), ("URL", ""), ("note", ""))
    for field, prefix in fields:
        if field in item:
            parts.append(f"{prefix}{item[field]}")
    return " ".join(p for p in parts if p)


def documents(items: list[Labelled]) -> dict[str, bytes]:
    """The labelled set as CSL-JSON and as a Markdown reference list."""
    csl = json.dumps([{"id": f"r{n}", **c.item} for n, c in enumerate(items)]).encode()
    lines = ["# References", ""]
    lines += [f"{n}. {vancouver(c.item)}" for n, c in enumerate(items, start=1)]
    return {"accuracy.json": csl, "accuracy.md": ("\n".join(lines) + "\n").encode()}


def evaluate(name: str = "accuracy.json") -> Scores:
    """Check the labelled set, written as ``name`` (``accuracy.json`` or ``accuracy.md``),
    against its fixture snapshot (in a temporary folder)."""
    items = labelled_set()
    data = documents(items)[name]
    with tempfile.TemporaryDirectory() as folder:
        snapshot = write_works(Path(folder) / "accuracy.duckdb", all_works())
        resolver = SnapshotResolver.open(snapshot)
        try:
            document = check_document(extract_bytes(data, name), resolver)
        finally:
            resolver.close()
    predicted = [c.tier for c in document.references]
    assert len(predicted) == len(items), "every labelled item is one reference"
    confusion = Counter((c.label, p) for c, p in zip(items, predicted, strict=True))
    precision: dict[str, float | None] = {}
    recall: dict[str, float | None] = {}
    for tier in TIERS:
        hit = confusion[(tier, tier)]
        said = sum(n for (_, p), n in confusion.items() if p == tier)
        truth = sum(n for (label, _), n in confusion.items() if label == tier)
        precision[tier] = hit / said if said else None
        recall[tier] = hit / truth if truth else None
    errors = [(c.case, c.label, p) for c, p in zip(items, predicted, strict=True) if c.label != p]
    return Scores(len(items), precision, recall, confusion, errors)


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:.3f}"


def render(scores: Scores, name: str) -> str:
    lines = [f"{name}: {scores.total} labelled references of {WORKS} works (offline)"]
    lines.append(f"{'tier':<14}{'precision':>10}{'recall':>8}{'labelled':>10}")
    for tier in TIERS:
        truth = sum(n for (label, _), n in scores.confusion.items() if label == tier)
        lines.append(
            f"{tier:<14}{_fmt(scores.precision[tier]):>10}{_fmt(scores.recall[tier]):>8}{truth:>10}"
        )
    wrong = Counter(scores.errors)
    for (case, label, got), n in sorted(wrong.items()):
        lines.append(f"  wrong: {case} ({label}) -> {got} x{n}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for name in ("accuracy.json", "accuracy.md"):
        print(render(evaluate(name), name), end="")
