"""JATS full text (Europe PMC ``fullTextXML``) → a ``pmcid:`` record.

Passage paths:

* ``title`` — ``article-title``;
* ``abstract.N`` — the main abstract (the first ``<abstract>`` without ``abstract-type``):
  one passage per ``<sec>`` (section = its title), or ``abstract.1`` holding all its
  paragraphs when it has no sections;
* ``body.<slug>.pN`` — paragraph ``N`` (1-based) directly inside a body section. ``slug`` is
  the section title folded to ASCII, lower-cased, non-alphanumerics → ``_``, at most 40
  characters (``section`` when the title is empty); a nested section's slug is its parent's
  slug + ``_`` + its own; a slug met twice gets ``_2``, ``_3``…; paragraphs directly under
  ``<body>`` use the slug ``main``. Paragraph-like children are ``<p>``, ``<list>`` and
  ``<disp-quote>``; tables, figures and supplementary material are left out of the text.

Licence (``permissions/license``, the first one): its ``xlink:href``, else its
``<ali:license_ref>``, else a Creative Commons licence URL linked in its text (an
``<ext-link xlink:href>``), normalised by :mod:`audit.licences`; the raw value is that URL or,
when there is none, the licence's text (and the licence ``unknown``: a paragraph such as "an
open access article under the terms of…" is not read as a licence).

Flags stay unknown (``None``): a full-text document alone does not say whether the article
was later retracted.

A notice (``article-type`` ``retraction``, ``correction`` or ``expression-of-concern``) gets
that notice's ``content_type`` (:data:`pipeline.records.NOTICE_CONTENT_TYPES`) instead of
``full_text``, and its ``<related-article>`` of type ``retracted-article``,
``corrected-article`` or ``object-of-concern`` becomes a ``retraction_of``, ``erratum_for`` or
``expression_of_concern_for`` relation (target from ``ext-link-type`` ``doi``, ``pmid`` /
``pubmed`` or ``pmcid`` / ``pmc`` and ``xlink:href``; other links are left out).
"""

from __future__ import annotations

import re
import unicodedata

from audit import licences
from pipeline.errors import ParseError
from pipeline.records import NOTICE_CONTENT_TYPES, Passage, Record, Relation
from pipeline.sources import citable
from pipeline.xmlsafe import Element, local, text_of

NOT_TEXT = (
    "table-wrap",
    "table-wrap-group",
    "fig",
    "fig-group",
    "supplementary-material",
    "media",
    "graphic",
    "alternatives",
)
PARAGRAPHS = frozenset({"p", "list", "disp-quote"})
SLUG_MAX = 40


def slugify(title: str) -> str:
    """A path segment ``[a-z0-9_]+`` for a section title (``section`` when empty)."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")
    if len(slug) > SLUG_MAX:
        slug = slug[:SLUG_MAX].rsplit("_", 1)[0] or slug[:SLUG_MAX]
    return slug or "section"


def _children(node: Element, name: str) -> list[Element]:
    return [c for c in node if local(c.tag) == name]


def _child(node: Element | None, *names: str) -> Element | None:
    current = node
    for name in names:
        if current is None:
            return None
        current = next((c for c in current if local(c.tag) == name), None)
    return current


def _paragraph_text(node: Element) -> str:
    if local(node.tag) == "list":
        items = [
            text_of(item, skip=NOT_TEXT) for item in node.iter() if local(item.tag) == "list-item"
        ]
        return " ".join(i for i in items if i)
    return text_of(node, skip=NOT_TEXT)


def _abstract(meta: Element) -> list[Passage]:
    abstracts = _children(meta, "abstract")
    main = next((a for a in abstracts if not a.get("abstract-type")), None)
    if main is None:
        return []
    passages: list[Passage] = []
    secs = _children(main, "sec")
    if secs:
        for sec in secs:
            label = text_of(_child(sec, "title")) or "Abstract"
            text = " ".join(
                t for t in (_paragraph_text(c) for c in sec if local(c.tag) in PARAGRAPHS) if t
            )
            if text:
                passages.append(
                    Passage(path=f"abstract.{len(passages) + 1}", section=label, text=text)
                )
        return passages
    text = " ".join(
        t for t in (_paragraph_text(c) for c in main if local(c.tag) in PARAGRAPHS) if t
    )
    if text:
        passages.append(Passage(path="abstract.1", section="Abstract", text=text))
    return passages


def unique_slug(slug: str, used: set[str]) -> str:
    """``slug``, or ``slug_2``, ``slug_3`` … the first not in ``used``; added to ``used``."""
    candidate, n = slug, 2
    while candidate in used:
        candidate = f"{slug}_{n}"
        n += 1
    used.add(candidate)
    return candidate


def _body(body: Element | None) -> list[Passage]:
    passages: list[Passage] = []
    used: set[str] = set()

    def walk(container: Element, slug: str | None, label: str) -> None:
        own = [c for c in container if local(c.tag) in PARAGRAPHS]
        texts = [t for t in (_paragraph_text(c) for c in own) if t]
        if texts:
            here = unique_slug(slug or "main", used)
            for n, text in enumerate(texts, start=1):
                passages.append(
                    Passage(path=f"body.{here}.p{n}", section=label or "Main", text=text)
                )
        for sec in _children(container, "sec"):
            title = text_of(_child(sec, "title"))
            own_slug = slugify(title)
            child_slug = f"{slug}_{own_slug}" if slug else own_slug
            child_label = f"{label} / {title}" if label and title else (title or label)
            child_label = child_label or "Untitled section"
            walk(sec, child_slug, child_label)

    if body is not None:
        walk(body, None, "")
    return passages


RELATED_NOTICES = {
    "retracted-article": "retraction_of",
    "corrected-article": "erratum_for",
    "object-of-concern": "expression_of_concern_for",
}
_LINK_SCHEMES = {"doi": "doi", "pmid": "pmid", "pubmed": "pmid", "pmcid": "pmcid", "pmc": "pmcid"}
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def _related(meta: Element, source: str) -> list[Relation]:
    """The notice relations of ``<related-article>`` elements (see the module docstring)."""
    relations = []
    for node in meta.iter():
        if local(node.tag) != "related-article":
            continue
        kind = RELATED_NOTICES.get((node.get("related-article-type") or "").lower())
        scheme = _LINK_SCHEMES.get((node.get("ext-link-type") or "").lower())
        ident = (node.get(_XLINK_HREF) or "").strip()
        if not (kind and scheme and ident):
            continue
        if scheme == "doi":
            ident = ident.lower()
            if not ident.startswith("10."):
                continue
        else:
            ident = _pmcid(ident) if scheme == "pmcid" else ident
            if citable.refusal(f"{scheme}:{ident}") is not None:
                continue  # not an id a record could have
        detail = text_of(node) or None
        relations.append(
            Relation(kind=kind, target=f"{scheme}:{ident}", source=source, detail=detail)
        )
    return relations


def _pmcid(value: str) -> str:
    value = value.strip()
    return value if value.upper().startswith("PMC") else f"PMC{value}"


def parse_article(root: Element, *, source: str = "europepmc") -> Record:
    """A JATS ``<article>`` as a ``pmcid:`` record (see the module docstring for paths)."""
    if local(root.tag) != "article":
        raise ParseError(f"expected a JATS <article> document but got <{local(root.tag)}>")
    meta = _child(root, "front", "article-meta")
    if meta is None:
        raise ParseError("JATS article without front/article-meta")
    ids: dict[str, str] = {}
    for node in _children(meta, "article-id"):
        kind = (node.get("pub-id-type") or "").lower()
        if kind and kind not in ids:
            ids[kind] = text_of(node)
    pmcid_raw = ids.get("pmcid") or ids.get("pmc")
    if not pmcid_raw:
        raise ParseError("JATS article without a PMCID (article-id pub-id-type='pmcid')")
    pmcid = _pmcid(pmcid_raw)
    title = text_of(_child(meta, "title-group", "article-title"))
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    passages += _abstract(meta)
    passages += _body(_child(root, "body"))
    journal = text_of(_child(root, "front", "journal-meta", "journal-title-group", "journal-title"))
    year = None
    for date in _children(meta, "pub-date"):
        found = re.search(r"\d{4}", text_of(_child(date, "year")))
        if found:
            year = int(found.group())
            break
    authors = []
    for group in _children(meta, "contrib-group"):
        for contrib in _children(group, "contrib"):
            if (contrib.get("contrib-type") or "author") != "author":
                continue
            name = _child(contrib, "name")
            if name is not None:
                given = text_of(_child(name, "given-names"))
                initials = "".join(w[0] for w in given.replace("-", " ").split() if w)
                authors.append(f"{text_of(_child(name, 'surname'))} {initials}".strip())
            else:
                collab = text_of(_child(contrib, "collab"))
                if collab:
                    authors.append(collab)
    article_type = root.get("article-type") or ""
    licence, licence_raw = _licence(meta)
    return Record(
        record_id=f"pmcid:{pmcid}",
        source=source,  # type: ignore[arg-type]  (validated by pydantic)
        title=title,
        doi=ids.get("doi"),
        pmid=ids.get("pmid"),
        pmcid=pmcid,
        year=year,
        journal=journal or None,
        authors=authors,
        publication_types=[article_type] if article_type else [],
        content_type=NOTICE_CONTENT_TYPES.get(article_type.lower(), "full_text"),
        relations=_related(meta, source),
        passages=passages,
        licence=licence,
        licence_raw=licence_raw,
    )


XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def _licence(meta: Element) -> tuple[str, str | None]:
    """The ``licence`` and ``licence_raw`` of ``article-meta`` (see the module docstring)."""
    node = _child(meta, "permissions", "license")
    if node is None:
        return licences.UNKNOWN, None
    href = (node.get(XLINK_HREF) or "").strip()
    if href:
        return licences.normalise(href), licences.cut(href)
    for child in node.iter():
        name = local(child.tag)
        if name == "license_ref" and text_of(child):
            ref = text_of(child)
            return licences.normalise(ref), licences.cut(ref)
    for child in node.iter():
        link = (child.get(XLINK_HREF) or "").strip() if local(child.tag) == "ext-link" else ""
        if link and licences.normalise(link).startswith("CC"):
            return licences.normalise(link), licences.cut(link)
    return licences.UNKNOWN, licences.cut(text_of(node))
