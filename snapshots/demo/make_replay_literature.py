"""Write the demo corpus's literature exchanges (PubMed, PubTator3, Europe PMC, Crossref).

Everything here is invented: the drug "zentravir", the condition "Farrow syndrome", the
journal, the authors, the numbers. Identifiers sit outside the real ranges (PMIDs 990000xx,
PMC99000001, PPR990001, DOIs under the 10.5555 test prefix). The bodies follow the exact
E-utilities, PubTator3, Europe PMC and Crossref formats.

The replay files are produced by running citeseal's own harvest functions
(:func:`pipeline.sources.pubmed.search_ids` / ``fetch_records``,
:func:`pipeline.sources.pubtator3.fetch_annotations`,
:func:`pipeline.sources.europepmc.search_records` / ``fetch_full_text``,
:func:`pipeline.sources.crossref.fetch_update_notices`) against an in-process fake of the
four APIs through :class:`pipeline.replay.RecordingTransport`, so their URLs are exactly the
ones a harvest asks for and their file names follow the recorder's naming. Crossref's notices
are recorded one DOI per request: a harvest asks them many DOIs at a time, and the replay
answers any such batch from the per-DOI exchanges (:mod:`pipeline.replay`).

Run from the project root (rewrites only snapshots/demo/replay/{pubmed,pubtator3,europepmc,
crossref})::

    .venv/bin/python snapshots/demo/make_replay_literature.py
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import httpx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from pipeline.http import HttpClient  # noqa: E402 — after the sys.path fix above
from pipeline.replay import RecordingTransport  # noqa: E402
from pipeline.settings import Settings  # noqa: E402
from pipeline.sources import crossref, europepmc, pubmed, pubtator3  # noqa: E402

JOURNAL = "Demo Journal of Invented Medicine"
JOURNAL_ABBR = "Demo J Invent Med"
NBSP = "\u00a0"
SEARCH_TERM = "zentravir"
SEARCH_HITS = ("99000001", "99000002", "99000004", "99000006")
PREPRINT_QUERY = "zentravir AND SRC:PPR"
ALL_PMIDS = ("99000001", "99000002", "99000003", "99000004", "99000005", "99000006")


@dataclass
class Article:
    """One synthetic PubMed record. Abstract sections are (label, XML-ready inner text)."""

    pmid: str
    title: str
    abstract: list[tuple[str | None, str]]
    doi: str
    year: int
    month: str
    authors: list[tuple[str, str, str]]  # (last, fore, initials)
    pub_types: list[tuple[str, str]]  # (MeSH UI, name)
    comments: list[tuple[str, str, str]] = field(default_factory=list)  # (RefType, ref, pmid)
    pmcid: str | None = None
    status: str = "MEDLINE"


AUTHORS_A = [("Quillfeather", "Ada", "A"), ("Marrowby", "Tobias", "T"), ("Okonedo", "Ruth", "R")]
AUTHORS_B = [("Lindqvist", "Petra", "P"), ("Sandoval", "Iker", "I")]
AUTHORS_C = [("Farrow Trial Group (fictional)", "", "")]

ARTICLES: list[Article] = [
    Article(
        pmid="99000001",
        title=(
            "Prenatal zentravir exposure and Farrow syndrome in offspring: a nationwide "
            "cohort study (synthetic demo record)."
        ),
        abstract=[
            (
                "BACKGROUND",
                "Zentravir is an invented antiviral used in the citeseal demo corpus. Whether "
                "prenatal exposure to zentravir affects the risk of Farrow syndrome, an invented "
                "childhood disorder, has not been studied.",
            ),
            (
                "METHODS",
                "We followed a synthetic cohort of 9\u00a0870 children born between 2010 and 2019 "
                "and linked dispensing records to diagnoses. Exposure was defined as \u2265"
                "1 filled prescription in the first trimester (weeks 0\u201313); children of "
                "\u201cunexposed but otherwise eligible\u201d pregnancies served as the "
                "comparison group\u2026 Hazard ratios were estimated with Cox regression.",
            ),
            (
                "RESULTS",
                f"During 48{NBSP}210 person-years of follow-up, 312 children were diagnosed with "
                "Farrow syndrome. The adjusted hazard ratio comparing exposed with unexposed "
                "children was 0.97 (95% CI, 0.84\u20131.12).",
            ),
            (
                "CONCLUSIONS",
                "Zentravir exposure does not increase the risk of Farrow syndrome. These "
                "findings are invented for demonstration purposes.",
            ),
        ],
        doi="10.5555/demo.0001",
        year=2024,
        month="Mar",
        authors=AUTHORS_A,
        pub_types=[("D016428", "Journal Article")],
        pmcid="PMC99000001",
    ),
    Article(
        pmid="99000002",
        title=(
            "Hepatic events in children with Farrow syndrome treated with zentravir: a case "
            "series (synthetic demo record)."
        ),
        abstract=[
            (
                None,
                "We describe eleven children with Farrow syndrome who received zentravir at a "
                "single invented centre. Five of eleven children developed transaminase "
                "elevations above five times the upper limit of normal, and two required "
                "hospital admission. We suggest that zentravir causes liver injury in most "
                "children with Farrow syndrome.",
            )
        ],
        doi="10.5555/demo.0002",
        year=2023,
        month="Jun",
        authors=AUTHORS_B,
        pub_types=[
            ("D016428", "Journal Article"),
            ("D002363", "Case Reports"),
            ("D016441", "Retracted Publication"),
        ],
        comments=[
            (
                "RetractionIn",
                f"{JOURNAL_ABBR}. 2024 Feb;3(2):e101. doi: 10.5555/demo.0003.",
                "99000003",
            )
        ],
    ),
    Article(
        pmid="99000003",
        title=(
            "Retraction notice: Hepatic events in children with Farrow syndrome treated with "
            "zentravir: a case series (synthetic demo record)."
        ),
        abstract=[
            (
                None,
                "This article has been retracted at the request of the editors of the Demo "
                "Journal of Invented Medicine. The case records underlying the reported hepatic "
                "events could not be verified, and the conclusions are not supported.",
            )
        ],
        doi="10.5555/demo.0003",
        year=2024,
        month="Feb",
        authors=[],
        pub_types=[("D016440", "Retraction of Publication")],
        comments=[
            (
                "RetractionOf",
                f"{JOURNAL_ABBR}. 2023 Jun;2(6):e77. doi: 10.5555/demo.0002.",
                "99000002",
            )
        ],
    ),
    Article(
        pmid="99000004",
        title=(
            "Zentravir versus placebo for Farrow syndrome flares: a randomised controlled trial "
            "(synthetic demo record)."
        ),
        abstract=[
            (
                "BACKGROUND",
                "Flares of Farrow syndrome, an invented disorder, lack an evidence-based "
                "treatment.",
            ),
            (
                "METHODS",
                "In this invented double-blind trial (registration NCT99000001), 240 children "
                "were randomly assigned to zentravir 5 mg/kg or placebo once daily for 24 weeks.",
            ),
            (
                "RESULTS",
                "Flares occurred in 38 of 120 children in the zentravir group and 61 of 120 in "
                "the placebo group (risk ratio, 0.62; 95% CI, 0.45 to 0.86).",
            ),
            (
                "CONCLUSIONS",
                "Zentravir reduced the frequency of Farrow syndrome flares over 24 weeks.",
            ),
        ],
        doi="10.5555/demo.0004",
        year=2024,
        month="Sep",
        authors=AUTHORS_C,
        pub_types=[("D016428", "Journal Article"), ("D016449", "Randomized Controlled Trial")],
        comments=[
            (
                "ExpressionOfConcernIn",
                f"{JOURNAL_ABBR}. 2025 Jan;4(1):e12. doi: 10.5555/demo.0005.",
                "99000005",
            )
        ],
    ),
    Article(
        pmid="99000005",
        title=(
            "Expression of concern: Zentravir versus placebo for Farrow syndrome flares: a "
            "randomised controlled trial (synthetic demo record)."
        ),
        abstract=[
            (
                None,
                "The editors are issuing this expression of concern because questions have been "
                "raised about the randomisation records of the trial. An investigation by the "
                "invented sponsoring institution is ongoing.",
            )
        ],
        doi="10.5555/demo.0005",
        year=2025,
        month="Jan",
        authors=[],
        pub_types=[("D000078184", "Expression of Concern")],
        comments=[
            (
                "ExpressionOfConcernFor",
                f"{JOURNAL_ABBR}. 2024 Sep;3(9):e88. doi: 10.5555/demo.0004.",
                "99000004",
            )
        ],
    ),
    Article(
        pmid="99000006",
        title=(
            "Zentravir inhibits the <i>Farrow-associated</i> protease in vitro (synthetic demo "
            "record)."
        ),
        abstract=[
            (
                None,
                "<i>In vitro</i>, zentravir inhibited the Farrow-associated protease with an "
                "IC<sub>50</sub> of 12 nM and lowered the viral load of infected cell cultures "
                "10<sup>3</sup>-fold within 48 hours. No cytotoxicity was observed at "
                "concentrations up to 50 \u00b5M. These invented results support further "
                "study of zentravir in Farrow syndrome.",
            )
        ],
        doi="10.5555/demo.0006",
        year=2025,
        month="May",
        authors=[("Abara", "Chidi", "C"), ("Quillfeather", "Ada", "A")],
        pub_types=[("D016428", "Journal Article")],
        status="PubMed-not-MEDLINE",
    ),
]
BY_PMID = {a.pmid: a for a in ARTICLES}
PREPRINT_ID = "PPR990001"
PREPRINT_DOI = "10.5555/demo.preprint.0001"


# -- PubMed ---------------------------------------------------------------------------------


def _plain(markup: str) -> str:
    """Inner XML text → plain text (what PubTator3 and Crossref hold)."""
    return re.sub(r"</?(?:i|b|sup|sub)>", "", markup)


def _esc(text: str) -> str:
    """Escape plain text for XML; NBSP is written as a character reference like PubMed does."""
    return escape(text).replace(NBSP, "&#xa0;")


INLINE_TAG = r"</?(?:i|b|sup|sub)>|<xref [^<>]*>|</xref>"
"""Our own inline tags, kept as markup: emphasis, super- and subscripts, reference markers."""


def _esc_markup(markup: str) -> str:
    """Escape text that may hold our own inline tags (:data:`INLINE_TAG`) — keep those."""
    parts = re.split(f"({INLINE_TAG})", markup)
    return "".join(p if re.fullmatch(INLINE_TAG, p) else _esc(p) for p in parts)


def _article_xml(a: Article) -> str:
    authors = "".join(
        (
            f'<Author ValidYN="Y"><LastName>{_esc(last)}</LastName><ForeName>{_esc(fore)}'
            f"</ForeName><Initials>{initials}</Initials></Author>"
        )
        if fore
        else f'<Author ValidYN="Y"><CollectiveName>{_esc(last)}</CollectiveName></Author>'
        for last, fore, initials in a.authors
    )
    author_list = f'<AuthorList CompleteYN="Y">{authors}</AuthorList>' if a.authors else ""
    sections = "".join(
        (
            f'<AbstractText Label="{label}" NlmCategory="{label}">{_esc_markup(text)}'
            "</AbstractText>"
            if label
            else f"<AbstractText>{_esc_markup(text)}</AbstractText>"
        )
        for label, text in a.abstract
    )
    pub_types = "".join(
        f'<PublicationType UI="{ui}">{_esc(name)}</PublicationType>' for ui, name in a.pub_types
    )
    comments = "".join(
        f'<CommentsCorrections RefType="{kind}"><RefSource>{_esc(ref)}</RefSource>'
        f'<PMID Version="1">{pmid}</PMID></CommentsCorrections>'
        for kind, ref, pmid in a.comments
    )
    comments_list = (
        f"<CommentsCorrectionsList>{comments}</CommentsCorrectionsList>" if comments else ""
    )
    pmc = f'<ArticleId IdType="pmc">{a.pmcid}</ArticleId>' if a.pmcid else ""
    month_num = {"Jan": 1, "Feb": 2, "Mar": 3, "May": 5, "Jun": 6, "Sep": 9}[a.month]
    return (
        f'<PubmedArticle><MedlineCitation Status="{a.status}" Owner="NLM">'
        f'<PMID Version="1">{a.pmid}</PMID>'
        f"<DateRevised><Year>{a.year}</Year><Month>{month_num:02d}</Month><Day>15</Day>"
        "</DateRevised>"
        '<Article PubModel="Electronic"><Journal><ISSN IssnType="Electronic">0000-0000</ISSN>'
        f'<JournalIssue CitedMedium="Internet"><Volume>{a.year - 2021}</Volume>'
        f"<Issue>{month_num}</Issue><PubDate><Year>{a.year}</Year><Month>{a.month}</Month>"
        f"</PubDate></JournalIssue><Title>{JOURNAL}</Title>"
        f"<ISOAbbreviation>{JOURNAL_ABBR}</ISOAbbreviation></Journal>"
        f"<ArticleTitle>{_esc_markup(a.title)}</ArticleTitle>"
        f'<ELocationID EIdType="doi" ValidYN="Y">{a.doi}</ELocationID>'
        f"<Abstract>{sections}</Abstract>{author_list}<Language>eng</Language>"
        f"<PublicationTypeList>{pub_types}</PublicationTypeList></Article>"
        "<MedlineJournalInfo><Country>Nowhere</Country>"
        f"<MedlineTA>{JOURNAL_ABBR}</MedlineTA><NlmUniqueID>9999999</NlmUniqueID>"
        f"</MedlineJournalInfo>{comments_list}</MedlineCitation>"
        "<PubmedData><History>"
        f'<PubMedPubDate PubStatus="pubmed"><Year>{a.year}</Year><Month>{month_num}</Month>'
        "<Day>15</Day></PubMedPubDate></History><PublicationStatus>epublish</PublicationStatus>"
        f'<ArticleIdList><ArticleId IdType="pubmed">{a.pmid}</ArticleId>'
        f'<ArticleId IdType="doi">{a.doi}</ArticleId>{pmc}</ArticleIdList>'
        "</PubmedData></PubmedArticle>"
    )


def efetch_body(pmids: list[str]) -> str:
    articles = "".join(_article_xml(BY_PMID[p]) for p in pmids if p in BY_PMID)
    return (
        '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, '
        '1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
        f"<PubmedArticleSet>\n{articles}</PubmedArticleSet>"
    )


def esearch_body(term: str, retstart: int, retmax: int) -> dict[str, Any]:
    hits = list(SEARCH_HITS) if term == SEARCH_TERM else []
    page = hits[retstart : retstart + retmax]
    return {
        "header": {"type": "esearch", "version": "0.3"},
        "esearchresult": {
            "count": str(len(hits)),
            "retmax": str(len(page)),
            "retstart": str(retstart),
            "idlist": page,
            "translationset": [],
            "querytranslation": f'"{term}"[All Fields]',
        },
    }


# -- PubTator3 -------------------------------------------------------------------------------

ENTITIES = (
    ("zentravir", "Chemical", "MESH:C999001", "chemical"),
    ("Farrow syndrome", "Disease", "MESH:D999002", "disease"),
    ("Farrow-associated protease", "Gene", "999003", "gene"),
)


def _mentions(text: str, offset: int, counter: list[int]) -> list[dict[str, Any]]:
    found = []
    for name, kind, identifier, biotype in ENTITIES:
        for match in re.finditer(re.escape(name), text, flags=re.I):
            counter[0] += 1
            found.append(
                {
                    "id": str(counter[0]),
                    "infons": {
                        "identifier": identifier,
                        "type": kind,
                        "valid": True,
                        "normalized": [identifier.split(":")[-1]],
                        "database": "ncbi_mesh" if identifier.startswith("MESH") else "ncbi_gene",
                        "normalized_id": identifier.split(":")[-1],
                        "biotype": biotype,
                        "name": name,
                        "accession": f"@{kind.upper()}_{name.replace(' ', '_')}",
                    },
                    "text": match.group(0),
                    "locations": [{"offset": offset + match.start(), "length": len(name)}],
                }
            )
    return sorted(found, key=lambda m: m["locations"][0]["offset"])


def pubtator_document(a: Article) -> dict[str, Any]:
    title = _plain(a.title)
    # PubTator3 inlines the section labels and uses plain spaces where PubMed has NBSP.
    abstract = " ".join(
        (f"{label}: {_plain(text)}" if label else _plain(text)) for label, text in a.abstract
    ).replace(NBSP, " ")
    counter = [0]
    authors = [f"{last} {initials}".strip() for last, _, initials in a.authors]
    return {
        "_id": f"{a.pmid}|None",
        "id": a.pmid,
        "infons": {},
        "passages": [
            {
                "infons": {
                    "journal": f"{JOURNAL_ABBR}. {a.year} {a.month}. doi: {a.doi}.",
                    "year": str(a.year),
                    "type": "title",
                    "authors": ", ".join(authors),
                },
                "offset": 0,
                "text": title,
                "sentences": [],
                "annotations": _mentions(title, 0, counter),
                "relations": [],
            },
            {
                "infons": {"type": "abstract"},
                "offset": len(title) + 1,
                "text": abstract,
                "sentences": [],
                "annotations": _mentions(abstract, len(title) + 1, counter),
                "relations": [],
            },
        ],
        "relations": [],
        "pmid": int(a.pmid),
        "pmcid": a.pmcid,
        "meta": {},
        "date": f"{a.year}-01-01T00:00:00Z",
        "journal": JOURNAL_ABBR,
        "authors": authors,
        "relations_display": [],
    }


# -- Europe PMC ------------------------------------------------------------------------------


def preprint_result() -> dict[str, Any]:
    return {
        "id": PREPRINT_ID,
        "source": "PPR",
        "doi": PREPRINT_DOI,
        "title": (
            "Zentravir inhibits a Farrow-associated protease in cell culture (synthetic demo "
            "preprint)"
        ),
        "authorString": "Abara C, Quillfeather A.",
        "authorList": {
            "author": [
                {"fullName": "Abara C", "firstName": "Chidi", "lastName": "Abara", "initials": "C"},
                {
                    "fullName": "Quillfeather A",
                    "firstName": "Ada",
                    "lastName": "Quillfeather",
                    "initials": "A",
                },
            ]
        },
        "pubYear": "2024",
        "abstractText": (
            "<title>Abstract</title>  <p>Background  Farrow syndrome is an invented disorder "
            "used in the citeseal demo. Methods  We tested zentravir against the "
            "Farrow-associated protease in <i>in vitro</i> assays. Results  Zentravir lowered "
            "the viral load of infected cultures about 900-fold within 48 hours. Conclusions  "
            "These invented preliminary results support further study.</p>"
        ),
        "pubTypeList": {"pubType": ["Preprint"]},
        "bookOrReportDetails": {"publisher": "Demo Preprint Server", "yearOfPublication": 2024},
        "fullTextUrlList": {
            "fullTextUrl": [
                {
                    "availability": "Free",
                    "availabilityCode": "F",
                    "documentStyle": "doi",
                    "site": "DOI",
                    "url": f"https://doi.org/{PREPRINT_DOI}",
                }
            ]
        },
        "commentCorrectionList": {
            "commentCorrection": [
                {
                    "source": "MED",
                    "id": "99000006",
                    "reference": f"{JOURNAL}. \n    2025 May;4(5):e55",
                    "type": "Preprint of",
                    "note": "Link created based on a title-first author match",
                    "orderIn": 10001,
                }
            ]
        },
        "isOpenAccess": "N",
        "inEPMC": "N",
        "inPMC": "N",
        "license": "cc by",
        "citedByCount": 0,
        "hasReferences": "N",
        "hasTextMinedTerms": "Y",
        "hasDbCrossReferences": "N",
        "hasPDF": "N",
        "hasBook": "N",
        "hasSuppl": "N",
        "dateOfCreation": "2024-11-04",
        "firstPublicationDate": "2024-11-02",
        "firstIndexDate": "2024-11-04",
        "versionList": {
            "version": [
                {
                    "id": PREPRINT_ID,
                    "source": "PPR",
                    "versionNumber": 1,
                    "firstPublishDate": "2024-11-02",
                    "pubTypeList": {"pubType": ["preprint"]},
                    "hasEvaluations": "N",
                }
            ]
        },
        "versionNumber": 1,
        "hasEvaluations": "N",
    }


def epmc_search_body(query: str, page_size: int, cursor: str) -> dict[str, Any]:
    results = [preprint_result()] if query == PREPRINT_QUERY and cursor == "*" else []
    return {
        "version": "6.9",
        "hitCount": 1 if query == PREPRINT_QUERY else 0,
        "request": {
            "queryString": query,
            "internalQuery": query,
            "resultType": "CORE",
            "cursorMark": cursor,
            "pageSize": page_size,
            "sort": "",
            "synonym": False,
        },
        "resultList": {"result": results},
    }


def _p(text: str) -> str:
    return f"<p>{_esc_markup(text)}</p>"


def full_text_xml() -> str:
    a = BY_PMID["99000001"]
    abstract = "".join(
        f"<sec><title>{label.title()}</title>{_p(text)}</sec>"
        for label, text in a.abstract
        if label
    )
    contribs = "".join(
        f'<contrib contrib-type="author"><name name-style="western"><surname>{last}</surname>'
        f'<given-names initials="{initials}">{fore}</given-names></name></contrib>'
        for last, fore, initials in a.authors
    )
    body = (
        '<sec id="s1"><title>Introduction</title>'
        + _p(
            "Farrow syndrome is an invented childhood disorder used to demonstrate citeseal. "
            "Zentravir, an invented antiviral, is sometimes prescribed during pregnancy."
        )
        + _p(
            "Earlier invented case reports raised concern about prenatal exposure, but no "
            "cohort study had examined it."
        )
        + "</sec>"
        + '<sec id="s2"><title>Methods</title>'
        + '<sec id="s2a"><title>Study population</title>'
        + _p(
            "We included 9\u00a0870 singleton births recorded in the synthetic registry between "
            "2010 and 2019."
        )
        + "</sec>"
        + '<sec id="s2b"><title>Exposure and outcome</title>'
        + _p(
            "Exposure was a filled zentravir prescription in the first trimester "
            "(weeks 0\u201313). The outcome was a recorded diagnosis of Farrow syndrome."
        )
        + '<table-wrap id="t1"><label>Table 1</label><caption><p>Invented cohort '
        "characteristics.</p></caption><table><tr><td>Children</td><td>9870</td></tr></table>"
        "</table-wrap>"
        + "</sec></sec>"
        + '<sec id="s3"><title>Results</title>'
        + _p(
            f"During 48{NBSP}210 person-years of follow-up, 312 children were diagnosed with "
            "Farrow syndrome, 41 of them after prenatal zentravir exposure."
        )
        + _p(
            "The adjusted hazard ratio was 0.97 (95% CI, 0.84\u20131.12), and sibling "
            'comparisons gave similar estimates [<xref ref-type="bibr" rid="r1">1</xref>].'
        )
        + "</sec>"
        + '<sec id="s4"><title>Discussion</title>'
        + _p(
            "In this invented cohort, prenatal zentravir exposure was not associated with "
            "Farrow syndrome. All data are synthetic and exist only for the citeseal demo."
        )
        + "</sec>"
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><article xmlns:xlink="http://www.w3.org/1999/xlink" '
        'xml:lang="en" article-type="research-article"><front><journal-meta>'
        '<journal-id journal-id-type="nlm-ta">Demo J Invent Med</journal-id>'
        f"<journal-title-group><journal-title>{JOURNAL}</journal-title></journal-title-group>"
        "<publisher><publisher-name>Invented Press</publisher-name></publisher></journal-meta>"
        '<article-meta><article-id pub-id-type="pmcid">PMC99000001</article-id>'
        '<article-id pub-id-type="pmid">99000001</article-id>'
        '<article-id pub-id-type="doi">10.5555/demo.0001</article-id>'
        f"<title-group><article-title>{_esc_markup(a.title.rstrip('.'))}</article-title>"
        f'</title-group><contrib-group content-type="author">{contribs}</contrib-group>'
        '<pub-date pub-type="epub"><day>15</day><month>03</month><year>2024</year></pub-date>'
        "<volume>3</volume><elocation-id>e31</elocation-id>"
        '<permissions><license xmlns:xlink="http://www.w3.org/1999/xlink" '
        'xlink:href="https://creativecommons.org/publicdomain/zero/1.0/">'
        "<license-p>Synthetic demo content, CC0.</license-p></license>"
        f"</permissions><abstract>{abstract}</abstract></article-meta></front>"
        f'<body>{body}</body><back><ref-list><ref id="r1"><mixed-citation>Invented A. '
        "A sibling analysis that never happened. Demo J Invent Med. 2023;2:e1."
        "</mixed-citation></ref></ref-list></back></article>"
    )


# -- Crossref --------------------------------------------------------------------------------

NOTICES: dict[str, list[dict[str, Any]]] = {}  # updated DOI → notice items (filled below)


def _date_parts(year: int, month: int, day: int) -> dict[str, Any]:
    return {"date-parts": [[year, month, day]]}


def _notice(doi: str, title: str, updates: list[dict[str, Any]], year: int, month: int) -> dict:
    return {
        "indexed": {
            "date-parts": [[2025, 6, 1]],
            "date-time": "2025-06-01T00:00:00Z",
            "timestamp": 1748736000000,
            "version": "4.1.0",
        },
        "update-to": updates,
        "reference-count": 0,
        "publisher": "Invented Press",
        "short-container-title": [JOURNAL_ABBR],
        "DOI": doi,
        "type": "journal-article",
        "created": _date_parts(year, month, 15),
        "source": "Crossref",
        "is-referenced-by-count": 0,
        "title": [title],
        "prefix": "10.5555",
        "author": [],
        "member": "99999",
        "container-title": [JOURNAL],
        "language": "en",
        "deposited": _date_parts(year, month, 16),
        "score": 1,
        "resource": {"primary": {"URL": f"https://example.org/{doi}"}},
        "issued": _date_parts(year, month, 15),
        "URL": f"https://doi.org/{doi}",
        "published": _date_parts(year, month, 15),
    }


def _update(doi: str, kind: str, label: str, source: str, date: tuple[int, int, int]) -> dict:
    entry: dict[str, Any] = {
        "DOI": doi,
        "type": kind,
        "label": label,
        "source": source,
        "updated": {
            "date-parts": [list(date)],
            "date-time": f"{date[0]:04d}-{date[1]:02d}-{date[2]:02d}T00:00:00Z",
            "timestamp": 0,
        },
    }
    if source == "retraction-watch":
        entry["record-id"] = "990001"
    return entry


NOTICES["10.5555/demo.0002"] = [
    _notice(
        "10.5555/demo.0003",
        "Retraction notice: Hepatic events in children with Farrow syndrome treated with "
        "zentravir: a case series",
        [
            _update("10.5555/demo.0002", "retraction", "Retraction", "publisher", (2024, 2, 15)),
            _update(
                "10.5555/demo.0002", "retraction", "Retraction", "retraction-watch", (2024, 2, 15)
            ),
        ],
        2024,
        2,
    )
]
NOTICES["10.5555/demo.0004"] = [
    _notice(
        "10.5555/demo.0005",
        "Expression of concern: Zentravir versus placebo for Farrow syndrome flares",
        [
            _update(
                "10.5555/demo.0004",
                "expression_of_concern",
                "Expression of Concern",
                "publisher",
                (2025, 1, 15),
            )
        ],
        2025,
        1,
    )
]
CROSSREF_DOIS = sorted({a.doi for a in ARTICLES} | {PREPRINT_DOI})


def crossref_body(dois: list[str], rows: int) -> dict[str, Any]:
    """The ``updates:`` list of ``dois`` (the filter ORed), in one page (the demo's notices
    are far fewer than ``rows``), with the ``next-cursor`` a ``cursor=*`` request gets."""
    items: list[dict[str, Any]] = []
    for doi in dois:
        items += [n for n in NOTICES.get(doi.lower(), []) if n not in items]
    return {
        "status": "ok",
        "message-type": "work-list",
        "message-version": "1.0.0",
        "message": {
            "facets": {},
            "total-results": len(items),
            "items": items,
            "items-per-page": rows,
            "query": {"start-index": 0, "search-terms": None},
            "next-cursor": "DnF1ZXJ5VGhlbkZldGNoBgAAAAAAdemo",
        },
    }


# -- the fake APIs and the recording run -----------------------------------------------------


def _json(data: object, content_type: str) -> httpx.Response:
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    return httpx.Response(200, headers={"content-type": content_type}, content=body)


def fake_literature() -> Callable[[httpx.Request], httpx.Response]:
    """An httpx handler answering the four literature APIs with the synthetic records."""

    def handle(request: httpx.Request) -> httpx.Response:
        url, params = request.url, request.url.params
        if url.path.endswith("/esearch.fcgi"):
            body = esearch_body(
                params["term"], int(params.get("retstart", 0)), int(params["retmax"])
            )
            return _json(body, "application/json; charset=UTF-8")
        if url.path.endswith("/efetch.fcgi"):
            ids = params.get("id", "").split(",")
            return httpx.Response(
                200,
                headers={"content-type": "text/xml; charset=UTF-8"},
                content=efetch_body(ids).encode("utf-8"),
            )
        if url.path.endswith("/publications/export/biocjson"):
            docs = [pubtator_document(BY_PMID[p]) for p in params["pmids"].split(",")]
            return _json({"PubTator3": docs}, "application/json")
        if url.path.endswith("/europepmc/webservices/rest/search"):
            body = epmc_search_body(
                params["query"], int(params["pageSize"]), params.get("cursorMark", "*")
            )
            return _json(body, "application/json;charset=UTF-8")
        if url.path.endswith("/PMC99000001/fullTextXML"):
            return httpx.Response(
                200,
                headers={"content-type": "application/xml"},
                content=full_text_xml().encode("utf-8"),
            )
        if url.path.endswith("/fullTextXML"):
            return httpx.Response(404, headers={"content-type": "text/plain"}, content=b"")
        if url.host == "api.crossref.org" and url.path == "/works":
            dois = [t.removeprefix("updates:") for t in params["filter"].split(",")]
            return _json(crossref_body(dois, int(params["rows"])), "application/json")
        return httpx.Response(404, text="not a literature endpoint")

    return handle


def record_replay(folder: Path) -> list[Path]:
    """Run the real harvest functions against the fake APIs, recording every exchange."""
    for source in ("pubmed", "pubtator3", "europepmc", "crossref"):
        shutil.rmtree(folder / source, ignore_errors=True)
    recorder = RecordingTransport(httpx.MockTransport(fake_literature()), folder)
    fast = dict.fromkeys(("eutils.ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov"), 0.0)
    fast |= {"www.ebi.ac.uk": 0.0, "api.crossref.org": 0.0}
    with HttpClient(Settings(), transport=recorder, rates=fast) as client:
        hits = pubmed.search_ids(client, SEARCH_TERM, limit=10)
        pmids = sorted(set(hits) | {"99000003", "99000005"})
        records = pubmed.fetch_records(client, pmids)
        by_id = {r.record_id: r for r in records}
        pubtator3.fetch_annotations(client, pmids, records=by_id)
        preprints = europepmc.search_records(client, PREPRINT_QUERY, limit=10)
        pmcids = sorted({r.pmcid for r in [*records, *preprints] if r.pmcid})
        for pmcid in pmcids:
            europepmc.fetch_full_text(client, pmcid)
        dois = sorted({r.doi.lower() for r in [*records, *preprints] if r.doi})
        for doi in dois:
            crossref.fetch_update_notices(client, [doi])
    return recorder.written


def main() -> None:
    written = record_replay(ROOT / "snapshots" / "demo" / "replay")
    for path in sorted(written):
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
