"""What an online check asks, as a corpus spec: the pure half of ``citeseal check --online``.

:func:`plan` takes the documents and what the snapshot could not place, and says what to
ask (:class:`Plan`); :func:`lookup_spec` makes it the corpus spec of a lookup snapshot;
:func:`asked` reads that spec back (the lookup snapshot's ``meta.spec``) with the failed
requests of its manifest, as the :class:`~audit.references.resolve.Asked` its resolver judges
by. The spec is the record of what was asked, so an offline re-run judges exactly as the
online run did.

The chain, per identifier the snapshot did not match (the spec table it goes into):

* ``doi``: Crossref works (``[crossref] dois``) and OpenAlex (``[openalex] dois``); an arXiv
  DataCite DOI (``10.48550/arxiv.…``) arXiv only;
* ``pmid``: PubMed efetch (``[pubmed] ids``); ``pmcid``: Europe PMC (``[europepmc] pmcids``);
* ``arxiv``: arXiv ``id_list`` (``[arxiv] ids``); ``nct``: ClinicalTrials.gov
  (``[clinicaltrials] ids``);

and per title of a reference the snapshot did not settle (any tier but ``verified`` and
``mismatch``): Crossref ``query.bibliographic`` (``[crossref] titles``), OpenAlex ``search``
(``[openalex] titles``) and PubMed esearch with the title's first words each in ``[ti]``
(``[pubmed] queries``, :func:`pubmed_title_term`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from audit.references.check import ReferenceCheck
from audit.references.model import ExtractedDocument
from audit.references.resolve import Asked, Key
from pipeline.snapshot.spec import CorpusSpec
from pipeline.sources.arxiv import ARXIV_ID, DATACITE_PREFIX
from pipeline.sources.spec_types import DOI, NCT, PMCID, PMID

TITLE_RESULTS = 5  # works each title search asks for
TITLE_WORDS = 12  # words of a title in a PubMed title query
_WORD = re.compile(r"[^\W_]+")
_OLD_ARXIV = re.compile(r"^([a-z][a-z-]*)(?:\.([a-z]{2}))?/([0-9]{7})$")


@dataclass
class Plan:
    """What to ask online, in the order first met."""

    dois: dict[str, None] = field(default_factory=dict)
    pmids: dict[str, None] = field(default_factory=dict)
    pmcids: dict[str, None] = field(default_factory=dict)
    arxiv: dict[str, None] = field(default_factory=dict)
    ncts: dict[str, None] = field(default_factory=dict)
    titles: dict[str, None] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any((self.dois, self.pmids, self.pmcids, self.arxiv, self.ncts, self.titles))

    def add_key(self, scheme: str, value: str) -> None:
        if scheme == "doi" and value.startswith(DATACITE_PREFIX):
            ident = arxiv_of_doi(value)
            if ident is not None:
                self.arxiv[ident] = None
        elif scheme == "doi" and DOI.match(value) and "|" not in value:
            self.dois[value] = None
        elif scheme == "pmid" and PMID.match(value):
            self.pmids[value] = None
        elif scheme == "pmcid" and PMCID.match(value):
            self.pmcids[value] = None
        elif scheme == "arxiv" and ARXIV_ID.match(value):
            self.arxiv[value] = None
        elif scheme == "nct" and NCT.match(value):
            self.ncts[value] = None


def arxiv_of_doi(doi: str) -> str | None:
    """The arXiv id of an arXiv DataCite DOI (lower case, as DOIs are held): ``2099.90001``,
    or ``math.AG/0601001`` with its subject class in upper case again."""
    ident = doi[len(DATACITE_PREFIX) :]
    old = _OLD_ARXIV.match(ident)
    if old:
        archive, subject, number = old.groups()
        ident = f"{archive}.{subject.upper()}/{number}" if subject else f"{archive}/{number}"
    return ident if ARXIV_ID.match(ident) else None


def pubmed_title_term(title: str) -> str:
    """A PubMed query for a title: its first :data:`TITLE_WORDS` words, each in ``[ti]``."""
    words = _WORD.findall(title)[:TITLE_WORDS]
    return " AND ".join(f"{w}[ti]" for w in words)


def plan(
    documents: Iterable[tuple[ExtractedDocument, Sequence[ReferenceCheck]]],
    placed: set[Key],
) -> Plan:
    """What to ask: every valid identifier the snapshot did not match (``placed``: those it
    did), and the title of every reference the snapshot left unsettled."""
    wanted = Plan()
    for document, checks in documents:
        for ref, check in zip(document.references, checks, strict=True):
            for ident in ref.identifiers:
                if ident.valid and (ident.scheme, ident.value) not in placed:
                    wanted.add_key(ident.scheme, ident.value)
            settled = check.tier in ("verified", "mismatch")
            if ref.title and not settled and pubmed_title_term(ref.title):
                wanted.titles[ref.title] = None
    return wanted


def lookup_spec(name: str, wanted: Plan) -> CorpusSpec:
    """The corpus spec of the lookup snapshot ``name`` that asks ``wanted``."""
    data: dict[str, Any] = {"name": name, "description": "fetched by citeseal check --online"}
    titles = list(wanted.titles)
    if wanted.dois or titles:
        data["crossref"] = {
            "dois": list(wanted.dois),
            "titles": [{"title": t, "limit": TITLE_RESULTS} for t in titles],
        }
    if wanted.dois or titles:
        data["openalex"] = {
            "dois": list(wanted.dois),
            "titles": [{"title": t, "limit": TITLE_RESULTS} for t in titles],
        }
    if wanted.pmids or titles:
        data["pubmed"] = {
            "ids": list(wanted.pmids),
            "queries": [{"term": pubmed_title_term(t), "limit": TITLE_RESULTS} for t in titles],
        }
    if wanted.pmcids:
        data["europepmc"] = {"pmcids": list(wanted.pmcids)}
    if wanted.arxiv:
        data["arxiv"] = {"ids": list(wanted.arxiv)}
    if wanted.ncts:
        data["clinicaltrials"] = {"ids": list(wanted.ncts)}
    return CorpusSpec.model_validate(data)


def asked(spec: CorpusSpec, failures: Iterable[tuple[str, str, str]]) -> Asked:
    """What a lookup snapshot's spec asked, with its failed requests (source, step, error)."""
    keys: dict[Key, list[str]] = {}

    def ask(scheme: str, values: Iterable[str], source: str) -> None:
        for value in values:
            keys.setdefault((scheme, value), []).append(source)

    options: dict[str, Any] = {n: spec.options(n) for n in spec.sources()}
    if options.get("crossref") is not None:
        ask("doi", options["crossref"].dois, "crossref")
    openalex = options.get("openalex")
    if openalex is not None:
        ask("doi", openalex.dois, "openalex")
    pubmed = options.get("pubmed")
    if pubmed is not None:
        ask("pmid", pubmed.ids, "pubmed")
    if options.get("europepmc") is not None:
        ask("pmcid", options["europepmc"].pmcids, "europepmc")
    if options.get("arxiv") is not None:
        ask("arxiv", options["arxiv"].ids, "arxiv")
        ask("doi", (f"{DATACITE_PREFIX}{i.lower()}" for i in options["arxiv"].ids), "arxiv")
    if options.get("clinicaltrials") is not None:
        ask("nct", options["clinicaltrials"].ids, "clinicaltrials")
    titles: dict[str, list[str]] = {}
    crossref = options.get("crossref")
    for query in (crossref.titles or ()) if crossref is not None else ():
        titles.setdefault(query.title, []).append("crossref")
    for query in openalex.titles if openalex is not None else ():
        titles.setdefault(query.title, []).append("openalex")
    terms = {q.term for q in pubmed.queries} if pubmed is not None else set()
    for title, sources in titles.items():
        if pubmed_title_term(title) in terms:
            sources.append("pubmed")
    failed: dict[str, str] = {}
    for source, step, error in failures:
        failed.setdefault(source, f"{source}: {step}: {error}")
    return Asked(
        keys={k: tuple(v) for k, v in keys.items()},
        titles={t: tuple(v) for t, v in titles.items()},
        failed=failed,
    )
