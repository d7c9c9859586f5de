"""The worlds cases are planted in: what a corpus holds, as plain values the oracle reads.

A :class:`World` pairs a corpus the audit reads (:class:`audit.corpus.Corpus`) with the same
facts written out for the oracle and the planter: every record of the lineage, its retained
versions and their passage texts, its flags and notices, and each source's harvest status.

- :func:`generated_world` invents a small corpus with the variety the folding must handle in
  real passage text: every dash, minus, quote mark, apostrophe and prime of the contract's
  table, no-break and thin spaces, ellipses, invisible characters, accented letters (also
  decomposed), superscripts and subscripts, comparison signs, units, decimals and minus signs;
  retracted, expression-of-concern, preprint, withdrawn, not-refreshed records, trial versions
  (one no longer retained), a failed source and a partial one.
- :func:`snapshot_world` reads the same facts from a snapshot file (the demo snapshot), through
  the audit's read-only corpus (the data layer only: no rule of the audit decides anything
  here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from audit.corpus import Corpus, InMemoryCorpus, PathRef, StoredRelation
from audit.references.resolve import Resolver


@dataclass(frozen=True)
class Bib:
    """What a registry holds about a record's work (the current version), as a reference list
    would cite it: the facts the reference check compares with a cited title, authors, year."""

    title: str
    authors: tuple[str, ...] = ()  # "Surname G" each
    year: int | None = None
    doi: str | None = None
    venue: str | None = None
    pmid: str | None = None  # another source's id the record also holds (a PubMed record's
    pmcid: str | None = None  # PMCID, a Europe PMC record's PMID)


@dataclass(frozen=True)
class Rec:
    """One record of the lineage: retained versions (oldest first) → path → passage text."""

    record_id: str
    source: str
    versions: Mapping[str, Mapping[str, str]]
    current: str
    withdrawn: bool = False
    retracted: bool | None = None
    expression_of_concern: bool | None = None
    preprint: bool | None = None
    notices: tuple[tuple[str, str], ...] = ()  # (relation kind, target)
    refreshed: bool = True
    gone_versions: tuple[str, ...] = ()  # versions the lineage had and no longer retains
    bib: Bib | None = None  # the work's metadata, for reference checks (None: not held)

    @property
    def scheme(self) -> str:
        return self.record_id.split(":", 1)[0]

    def text(self, version: str, path: str) -> str | None:
        return self.versions.get(version, {}).get(path)

    def paths(self) -> list[str]:
        """Every path of any retained version, in first-seen order."""
        seen: dict[str, None] = {}
        for texts in self.versions.values():
            seen.update(dict.fromkeys(texts))
        return list(seen)


@dataclass
class World:
    """A corpus and its facts. ``sources``: harvest status per source (absent: not harvested)."""

    name: str
    sources: dict[str, str]
    records: dict[str, Rec]
    corpus: Corpus = field(repr=False)
    resolver: Resolver | None = field(default=None, repr=False)
    """Answers reference look-ups from the same facts (None: reference checks not planted)."""


# ---------------------------------------------------------------------------------------------
# The generated world

DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe31\ufe32\ufe58\ufe63\uff0d"
SINGLES = "\u2018\u2019\u201a\u201b\u2039\u203a\u2032\u2035\u02b9\u02bc\u275b\u275c\uff07"
DOUBLES = (
    "\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033\u2036\u02ba\u275d\u275e\u2e42\u301d\u301e\u301f"
    "\uff02"
)
TRIPLES = "\u2034\u2037"
NO_BREAKS = "\u00a0\u2007\u202f"
INVISIBLES = "\u00ad\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"

_WORDS = (
    "cohort",
    "flare",
    "dose",
    "serum",
    "trough",
    "renal",
    "hepatic",
    "plasma",
    "infusion",
    "titre",
    "lesion",
    "biopsy",
    "relapse",
    "uptake",
)


def _word(i: int) -> str:
    return _WORDS[i % len(_WORDS)]


def _typography_passages() -> list[str]:
    """Passages in which every typographic character of the contract's table occurs."""
    out = []
    for i, dash in enumerate(DASHES):
        out.append(
            f"In arm {i + 2} the {_word(i)} rose from week {i + 3}{dash}{i + 9} and stayed "
            f"high in the {_word(i + 5)}{dash}treated group of site {i + 11}."
        )
    for i, mark in enumerate(SINGLES):
        out.append(
            f"Nurses at ward {i + 4} noted the patient{mark}s {_word(i + 1)} score of {i + 20} "
            f"on day {i + 7} before the {_word(i + 3)} review."
        )
    for i, mark in enumerate(DOUBLES):
        out.append(
            f"Investigators {i + 30} called the {_word(i + 2)} change {mark}modest{mark} at "
            f"visit {i + 5} of the {_word(i + 6)} study."
        )
    for i, mark in enumerate(TRIPLES):
        out.append(f"The angle measured {i + 40}{mark} on scan {i + 2} of the {_word(i)} series.")
    for i, space in enumerate(NO_BREAKS):
        out.append(
            f"Each vial held {i + 5}{space}mg of drug for {_word(i + 4)} clinic {i + 60} in "
            f"the {_word(i + 8)} phase."
        )
    for i, mark in enumerate(INVISIBLES):
        out.append(
            f"The {_word(i + 2)} follow{mark}up of unit {i + 70} lasted {i + 8} months in the "
            f"{_word(i + 9)} registry."
        )
    return out


_CLINICAL = (
    "Zentravir reduced the flare rate by 2.5% (95% CI 1.2\u20133.8; p < 0.05) in children aged "
    "6 to 12 years, and the mean change was \u22120.4 points at week 24.",
    "Serum levels above 10\u00b3 copies/mL were seen in 14 of 52 patients given 40 mg daily, "
    "and CO\u2082 retention \u2264 5% was reported\u2026 only once.",
    "The caf\u00e9-au-lait macules of the na\u00efve cohort in M\u00fcnchen were graded by "
    "Dr. Nu\u00f1ez; the area was 3.2 cm\u00b2 on average.",
    "Trough concentrations \u2265 2 \u00b5g/mL did not increase the risk of renal events in "
    "the study ... as reported by the safety board.",
    "Adverse events were mild in 81% of cases, with no deaths and 3 withdrawals "
    "during the 48-week extension.",
)


_TITLE_A = "Zentravir in Farrow syndrome: a cohort study"

_SUPPORT = (  # plain sentences a support judge reads on clear signals (claim_cases.py)
    "Zentravir did not increase the risk of renal failure in adults with Farrow syndrome.",
    "Zentravir lowered the weekly flare rate by 12% in children with Farrow syndrome.",
    "Zentravir may not reduce hepatic injury in elderly patients with Farrow syndrome.",
    "Daily zentravir raised serum ferritin levels in adults with iron overload.",
    "Zentravir showed no association with hepatic failure in adults with Farrow syndrome.",
    "Zentravir lowered the nightly cough rate by more than 20% in adults with Farrow syndrome.",
)


def _generated_records() -> list[Rec]:
    typo = _typography_passages()
    half = len(typo) // 2
    abstract_a = {f"abstract.{n + 1}": t for n, t in enumerate(_CLINICAL)}
    return [
        Rec(
            "pmid:99100001",
            "pubmed",
            {
                "1": {"title": "Zentravir in Farrow syndrome: a cohort study.", **abstract_a},
                "2": {
                    "title": "Zentravir in Farrow syndrome: a cohort study.",
                    **abstract_a,
                    "abstract.1": _CLINICAL[0].replace("2.5%", "2.7%"),
                },
            },
            current="2",
            bib=Bib(_TITLE_A, ("Farrow A", "Bell C"), 2025, "10.5555/eval.0001"),
        ),
        Rec(
            "pmid:99100002",
            "pubmed",
            {"1": {f"body.p{n + 1}": t for n, t in enumerate(typo[:half])}},
            current="1",
        ),
        Rec(
            "pmcid:PMC99100001",
            "europepmc",
            {"1": {f"body.p{n + 1}": t for n, t in enumerate(typo[half:])}},
            current="1",
            refreshed=False,
            bib=Bib("Typography of ward notes in a zentravir registry", ("Oduya K",), 2021),
        ),
        Rec(
            "pmid:99100003",
            "pubmed",
            {"1": {"abstract.1": "Zentravir lowered relapse by 30% in a trial later retracted."}},
            current="1",
            retracted=True,
            notices=(("retraction_in", "pmid:99100090"),),
            bib=Bib("Zentravir and relapse in adults: a randomised trial", ("Quill R",), 2023),
        ),
        Rec(
            "pmid:99100004",
            "pubmed",
            {"1": {"abstract.1": "A retraction notice links to this cohort of 40 patients."}},
            current="1",
            retracted=None,
            notices=(("retraction_in", "doi:10.5555/eval.0004"),),
        ),
        Rec(
            "pmid:99100005",
            "pubmed",
            {"1": {"abstract.1": "Hepatic enzymes rose in 9 of 120 patients on zentravir."}},
            current="1",
            retracted=False,
            expression_of_concern=None,  # known by the notice alone
            notices=(("expression_of_concern_in", "pmid:99100091"),),
        ),
        Rec(
            "pmid:99100008",
            "pubmed",
            {"1": {"abstract.1": "The journal flagged this study of 33 adults with a concern."}},
            current="1",
            expression_of_concern=True,
            bib=Bib("Zentravir dosing in adults: an open-label study", ("Moss T", "Hart L"), 2022),
        ),
        Rec(
            "pmid:99100007",
            "pubmed",
            {"1": {"abstract.1": "A preprint server posted this dose study of 64 adults."}},
            current="1",
            preprint=True,
            bib=Bib(
                "A dose-finding study of zentravir in adults",
                ("Iyer N",),
                2024,
                "10.5555/eval.0007",
            ),
        ),
        Rec(
            "pmid:99100006",
            "pubmed",
            {"1": {"abstract.1": "This cohort of 75 children was withdrawn upstream."}},
            current="1",
            withdrawn=True,
        ),
        Rec(
            "ppr:PPR991001",
            "europepmc",
            {
                "1": {"abstract.1": "A preprint found plasma clearance of 3.1 L/h in 18 adults."},
                "2": {"abstract.1": "A preprint found plasma clearance of 3.4 L/h in 21 adults."},
            },
            current="2",
            preprint=None,  # a preprint by its scheme alone
            notices=(("preprint_of", "pmid:99100001"),),
        ),
        Rec(
            "nct:NCT99100001",
            "clinicaltrials",
            {
                "2025-01-15": {
                    "trial.brief_summary.1": "Participants take zentravir or placebo once "
                    "daily for 24 weeks.",
                    "trial.primary_outcome.1": "Flare rate at week 24.",
                    "trial.eligibility.1": "Children aged 6 to 12 years with Farrow syndrome.",
                },
                "2025-06-02": {
                    "trial.brief_summary.1": "Participants take zentravir or placebo once "
                    "daily for 48 weeks, after an amendment.",
                    "trial.primary_outcome.1": "Flare rate at week 24.",
                },
            },
            current="2025-06-02",
            gone_versions=("2024-11-30",),
            bib=Bib("Zentravir for children with Farrow syndrome (ZEN-KIDS)", ("Farrow A",)),
        ),
        Rec(
            "pmid:99100009",
            "pubmed",
            {"1": {f"abstract.{n + 1}": t for n, t in enumerate(_SUPPORT)}},
            current="1",
            bib=Bib(
                "Renal safety of zentravir in adults with Farrow syndrome",
                ("Okafor E", "Lind S"),
                2024,
                "10.5555/eval.0009",
            ),
        ),
        Rec(
            "setid:5eed0099-0000-4000-8000-000000000001",
            "openfda",
            {"3": {"label.boxed_warning.1": "Zentravir may cause serious hepatic injury."}},
            current="3",
            refreshed=False,
        ),
    ]


GENERATED_SOURCES = {
    "pubmed": "ok",
    "europepmc": "partial",
    "clinicaltrials": "ok",
    "openfda": "failed",
}


def generated_world() -> World:
    """The generated corpus (fixed content: the seed chooses the cases, not the world)."""
    records = _generated_records()
    corpus = InMemoryCorpus(sources=dict(GENERATED_SOURCES), name="generated")
    for r in records:
        corpus.add_record(
            r.record_id,
            r.source,
            {v: dict(t) for v, t in r.versions.items()},
            current=r.current,
            relations=[StoredRelation(kind, target) for kind, target in r.notices],
            withdrawn=r.withdrawn,
            retracted=r.retracted,
            expression_of_concern=r.expression_of_concern,
            preprint=r.preprint,
            refreshed=r.refreshed,
            last_seen=None if r.refreshed else "generated-0",
        )
    from audit.evaluation.resolver import WorldResolver  # it reads a World

    facts = {r.record_id: r for r in records}
    world = World("generated", dict(GENERATED_SOURCES), facts, corpus)
    world.resolver = WorldResolver(world)
    return world


# ---------------------------------------------------------------------------------------------
# A snapshot file


_BIB_SQL = """
SELECT r.record_id, r.title, r.authors, r.year, r.doi, r.journal, r.pmid, r.pmcid
FROM record_state s JOIN records r ON r.record_id = s.record_id AND r.version = s.current_version
WHERE r.title IS NOT NULL
"""


def _bibs(rows: list[tuple[object, ...]]) -> dict[str, Bib]:
    """The current version's title, authors, year, DOI, journal, PMID and PMCID of each titled
    record."""
    out = {}
    for rid, title, authors, year, doi, journal, pmid, pmcid in rows:
        names = json.loads(authors) if isinstance(authors, str) and authors else []
        out[str(rid)] = Bib(
            str(title),
            tuple(str(a) for a in names) if isinstance(names, list) else (),
            year if isinstance(year, int) else None,
            doi if isinstance(doi, str) else None,
            journal if isinstance(journal, str) else None,
            pmid if isinstance(pmid, str) else None,
            pmcid if isinstance(pmcid, str) else None,
        )
    return out


def snapshot_world(path: Path, corpus: Corpus, name: str | None = None) -> World:
    """The facts of the snapshot at ``path`` (read through ``corpus``, opened on it). Its
    reference look-ups are the snapshot resolver's: close it with :func:`close_world`."""
    from audit.duckdb_corpus import read_only_connection
    from audit.references.resolve import SnapshotResolver

    con = read_only_connection(path)
    try:
        pairs = con.execute("SELECT DISTINCT record_id, path FROM passages").fetchall()
        ids = [
            r[0] for r in con.execute("SELECT DISTINCT record_id FROM record_versions").fetchall()
        ]
        bibs = _bibs(con.execute(_BIB_SQL).fetchall())
    finally:
        con.close()
    stored = corpus.records(ids)
    held = corpus.passage_versions({PathRef(r, p) for r, p in pairs if r in stored})
    texts: dict[str, dict[str, dict[str, str]]] = {}
    for ref, passages in held.items():
        for p in passages:
            texts.setdefault(ref.record_id, {}).setdefault(p.version, {})[p.path] = p.text
    records: dict[str, Rec] = {}
    for rid, s in sorted(stored.items()):
        versions = texts.get(rid, {})
        records[rid] = Rec(
            rid,
            s.source,
            {v: versions.get(v, {}) for v in s.versions},
            current=s.current_version,
            withdrawn=s.withdrawn,
            retracted=s.retracted,
            expression_of_concern=s.expression_of_concern,
            preprint=s.preprint,
            notices=tuple((r.kind, r.target) for r in s.relations),
            refreshed=s.refreshed,
            bib=bibs.get(rid),
        )
    identity = corpus.identity()
    resolver = SnapshotResolver.open(path, identity.name)
    return World(name or identity.name, dict(corpus.source_status()), records, corpus, resolver)


def close_world(world: World) -> None:
    """Close what the world opened (a snapshot world's resolver connection)."""
    close = getattr(world.resolver, "close", None)
    if close is not None:
        close()
