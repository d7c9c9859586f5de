"""A generated PubMed baseline: files in the real format, synthetic content.

:func:`generate_baseline` writes ``OUT/baseline/pubmed99nNNNN.xml.gz`` (the records split
evenly across ``files`` files) and ``OUT/updates/pubmed99nNNNN.xml.gz`` (``updates`` daily
update files numbered after them), each a gzipped ``PubmedArticleSet`` with NCBI's DOCTYPE,
as NCBI publishes them. The content is ours and clearly synthetic: PMIDs from
:data:`FIRST_PMID` (above 99,000,000, where no real PMID will be for decades), DOIs under
the 10.5555 test prefix, titles marked "(synthetic)". The same arguments always write the
same bytes (``mtime`` 0 in the gzip header, a seeded generator per record).

Every update file holds what real ones do: revised records (a changed abstract), records
new to PubMed, one ``DeleteCitation``, and a new retraction — a retraction notice
(``Retraction of Publication``, ``RetractionOf`` the target) and the target revised as
``Retracted Publication`` with a ``RetractionIn`` link. Half of the abstracts are structured
(labelled sections), half are one paragraph; some text carries non-ASCII (Greek letters,
comparison signs, an en dash) so folding is exercised.
"""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

FIRST_PMID = 99_500_001
MAX_RECORDS = 99_999_999 - FIRST_PMID  # ids stay 8 digits, above the demo's and the bench's
FILE_PREFIX = "pubmed99n"
DOCTYPE = (
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">'
)
REVISE_EVERY = 50  # each update file revises one baseline record in this many
LABELS = ("BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS")
_VOCABULARY = """
synthetic registry enrolled sibling kinase plasma serum tablet infusion cohort onset relapse
remission tolvanex quorvalide marbetin zentravir biomarker specificity sensitivity prevalence
mortality admission discharge weekly monthly nightly"""
WORDS = _VOCABULARY.split()
SPICE = ("α-synuclein", "β-blockers", "≥ 65 years", "2–4 weeks", "IL-6 ≤ 7 pg/mL")


@dataclass(frozen=True)
class Generated:
    """What :func:`generate_baseline` wrote: the two folders and what the updates hold."""

    baseline: Path
    updates: Path
    records: int  # records of the baseline
    revised: tuple[str, ...]  # record ids revised by the update files
    deleted: tuple[str, ...]  # record ids deleted by them
    added: tuple[str, ...]  # record ids new in them (retraction notices included)
    retracted: tuple[str, ...]  # record ids retracted by them


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    if rng.random() < 0.2:
        text += f" in {rng.choice(SPICE)}"
    return text.capitalize() + f" ({rng.randint(1, 999)} of {rng.randint(1000, 9999)})."


def article_xml(pmid: int, *, revision: int = 0, retraction_of: int | None = None) -> str:
    """One synthetic ``PubmedArticle`` (``revision`` > 0: its text as revised that many
    times; ``retraction_of``: a retraction notice of that PMID)."""
    rng = random.Random(pmid)
    title = _sentence(rng, 9).removesuffix(".") + " (synthetic)"
    if rng.random() < 0.5:
        body = "".join(
            f'<AbstractText Label="{label}" NlmCategory="{label}">'
            f"{escape(' '.join(_sentence(rng, 12) for _ in range(2)))}</AbstractText>"
            for label in LABELS
        )
    else:
        body = (
            f"<AbstractText>{escape(' '.join(_sentence(rng, 12) for _ in range(5)))}</AbstractText>"
        )
    if revision:
        note = f"Revised text, version {revision + 1} of this synthetic record."
        body = body.replace("</AbstractText>", f" {note}</AbstractText>", 1)
    types = ["Journal Article"]
    links = ""
    if retraction_of is not None:
        types = ["Retraction of Publication"]
        title = f"Retraction notice: synthetic record {retraction_of}"
        body = (
            f"<AbstractText>This synthetic article ({retraction_of}) is retracted.</AbstractText>"
        )
        links = _link("RetractionOf", retraction_of)
    authors = "".join(
        f"<Author><LastName>Synthetic{rng.randint(1, 400)}</LastName><ForeName>Ada</ForeName>"
        "<Initials>A</Initials></Author>"
        for _ in range(rng.randint(1, 5))
    )
    return _article(pmid, rng.randint(1990, 2025), title, body, authors, types, links)


def retracted_xml(pmid: int, notice: int, *, revision: int = 0) -> str:
    """The article ``pmid`` as revised when ``notice`` retracts it."""
    plain = article_xml(pmid, revision=revision)
    types = "<PublicationType>Journal Article</PublicationType>"
    return plain.replace(
        types, types + "<PublicationType>Retracted Publication</PublicationType>"
    ).replace("</Article>", "</Article>" + _link("RetractionIn", notice), 1)


def _link(kind: str, pmid: int) -> str:
    return (
        f'<CommentsCorrectionsList><CommentsCorrections RefType="{kind}">'
        f'<RefSource>Synthetic J. 2025</RefSource><PMID Version="1">{pmid}</PMID>'
        "</CommentsCorrections></CommentsCorrectionsList>"
    )


def _article(
    pmid: int, year: int, title: str, body: str, authors: str, types: list[str], links: str
) -> str:
    pub_types = "".join(f"<PublicationType>{t}</PublicationType>" for t in types)
    return (
        '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{pmid}</PMID><Article PubModel="Print">'
        "<Journal><JournalIssue><PubDate>"
        f"<Year>{year}</Year></PubDate></JournalIssue>"
        "<Title>Journal of Synthetic Records</Title></Journal>"
        f"<ArticleTitle>{escape(title)}</ArticleTitle>"
        f"<Abstract>{body}</Abstract><AuthorList>{authors}</AuthorList>"
        f"<PublicationTypeList>{pub_types}</PublicationTypeList></Article>{links}"
        "</MedlineCitation><PubmedData>"
        f'<ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId>'
        f'<ArticleId IdType="doi">10.5555/synthetic.{pmid}</ArticleId></ArticleIdList>'
        "<PublicationStatus>ppublish</PublicationStatus></PubmedData></PubmedArticle>"
    )


def _write(path: Path, articles: list[str], deleted: list[int]) -> None:
    parts = ['<?xml version="1.0" encoding="utf-8"?>\n', DOCTYPE, "\n<PubmedArticleSet>\n"]
    parts.extend(a + "\n" for a in articles)
    if deleted:
        pmids = "".join(f'<PMID Version="1">{p}</PMID>' for p in deleted)
        parts.append(f"<DeleteCitation>{pmids}</DeleteCitation>\n")
    parts.append("</PubmedArticleSet>\n")
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write("".join(parts).encode("utf-8"))


def generate_baseline(out: Path, records: int, *, files: int = 4, updates: int = 1) -> Generated:
    """Write a generated baseline of ``records`` records in ``files`` files and ``updates``
    update files under ``out`` (module docstring); ValueError for sizes it cannot make."""
    if not 1 <= files <= records:
        raise ValueError(f"expected 1 to {records} baseline files, got {files}")
    if not 1 <= records <= MAX_RECORDS // 2:
        raise ValueError(f"expected 1 to {MAX_RECORDS // 2:,} records, got {records:,}")
    if not 0 <= updates <= 99:
        raise ValueError(f"expected 0 to 99 update files, got {updates}")
    baseline, folder = out / "baseline", out / "updates"
    baseline.mkdir(parents=True)
    folder.mkdir(parents=True)
    per = -(-records // files)
    for number in range(files):
        low = FIRST_PMID + number * per
        pmids = range(low, min(low + per, FIRST_PMID + records))
        _write(
            baseline / f"{FILE_PREFIX}{number + 1:04d}.xml.gz", [article_xml(p) for p in pmids], []
        )
    return _updates(baseline, folder, records, files, updates)


def _updates(baseline: Path, folder: Path, records: int, files: int, updates: int) -> Generated:
    revisions: dict[int, int] = {}
    revised: list[str] = []
    deleted: list[str] = []
    added: list[str] = []
    retracted: list[str] = []
    fresh = FIRST_PMID + records  # the next PMID new to PubMed
    for update in range(1, updates + 1):
        articles: list[str] = []
        targets = range(FIRST_PMID + update % REVISE_EVERY, FIRST_PMID + records, REVISE_EVERY)
        for pmid in targets:
            revisions[pmid] = revisions.get(pmid, 0) + 1
            articles.append(article_xml(pmid, revision=revisions[pmid]))
            revised.append(f"pmid:{pmid}")
        new = max(1, records // 100)
        articles.extend(article_xml(p) for p in range(fresh, fresh + new))
        added.extend(f"pmid:{p}" for p in range(fresh, fresh + new))
        notice, fresh = fresh + new, fresh + new + 1
        target = FIRST_PMID + (update * 7 + 3) % records
        articles.append(article_xml(notice, retraction_of=target))
        articles.append(retracted_xml(target, notice, revision=revisions.get(target, 0)))
        added.append(f"pmid:{notice}")
        retracted.append(f"pmid:{target}")
        gone = FIRST_PMID + (update * 11 + 5) % records
        gone = gone if gone != target else FIRST_PMID + (gone - FIRST_PMID + 1) % records
        deleted.append(f"pmid:{gone}")
        _write(folder / f"{FILE_PREFIX}{files + update:04d}.xml.gz", articles, [gone])
    return Generated(
        baseline, folder, records, tuple(revised), tuple(deleted), tuple(added), tuple(retracted)
    )
