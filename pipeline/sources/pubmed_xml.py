"""PubMed E-utilities bodies → records: the pure parser of esearch (JSON or XML) and efetch XML
(:mod:`pipeline.sources.pubmed` is the source: its requests, paging and plug-in).

Passage paths: ``title``; ``abstract.N`` — one passage per ``AbstractText`` (1-based, in
document order; a structured abstract gives one passage per labelled section, whose label is
the passage ``section``; an unstructured abstract is ``abstract.1`` with section
``Abstract``). Book chapters (``PubmedBookArticle``) use the same scheme.

Flags (a PubMed record carries its full PublicationType list, so they are known):
``retracted`` is True for PT "Retracted Publication" or a ``RetractionIn`` /
``RetractedandRepublishedIn`` link, else False — a retraction *notice* is not retracted;
``expression_of_concern`` is True with an ``ExpressionOfConcernIn`` link, else False;
``preprint`` is True for PT "Preprint", else False.

Relations: every ``CommentsCorrections`` entry, whatever its ``RefType``
(:data:`pipeline.records.REF_TYPE_KINDS`; a value outside the DTD's list is kept in snake
case), targets ``pmid:N``, else the ``doi:`` in its ``RefSource``; one with neither is left out.
Licence: ``unknown`` — a PubMed record names no licence (PubMed abstracts keep their
publishers' or authors' copyright); ``licence_raw`` keeps the abstract's
``CopyrightInformation`` text when there is one, which is never read as a licence. The PMC
open-access licence of an article is its Europe PMC ``pmcid:`` record's.
Text keeps superscripts and subscripts (:func:`pipeline.xmlsafe.script`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from audit import licences
from pipeline.errors import ParseError
from pipeline.records import ParseResult, Record, Refusal, relation_kind
from pipeline.sources import citable
from pipeline.sources import jsonshape as shape
from pipeline.xmlsafe import Element, clean, load_json, parse_xml, text_of

SOURCE = "pubmed"
ESEARCH_CAP = 10_000  # esearch cannot page past the first 10,000 PubMed results

CONTENT_TYPES: tuple[tuple[str, str], ...] = (
    ("retraction of publication", "retraction_notice"),
    ("expression of concern", "expression_of_concern"),
    ("published erratum", "erratum"),
    ("preprint", "preprint"),
)
_RETRACTING = frozenset({"RetractionIn", "RetractedandRepublishedIn"})
_DOI_IN_TEXT = re.compile(r"doi:\s*(10\.\d{4,9}/\S+?)\.?(?:\s|$)", re.I)


# -- parsing -------------------------------------------------------------------------------
def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Parse an efetch XML (PubmedArticleSet) or an esearch JSON/XML body."""
    del url  # the body tells which endpoint it came from
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if text.lstrip().startswith(("{", "[")):
        return _parse_esearch_json(text)
    root = parse_xml(body, what="PubMed XML (efetch PubmedArticleSet or esearch)")
    tag = root.tag if isinstance(root.tag, str) else ""
    if tag == "eSearchResult":
        return _parse_esearch_xml(root)
    if tag == "PubmedArticleSet":
        return _article_set(root)
    if tag in {"eFetchResult", "ERROR"}:
        raise ParseError(f"NCBI answered with an error: {text_of(root)[:200]}")
    raise ParseError(f"expected PubMed XML (PubmedArticleSet or eSearchResult) but got <{tag}>")


def _article_set(root: Element) -> ParseResult:
    records, refused = citable.partition(  # each PMID checked as its record is built
        _article(node) if node.tag == "PubmedArticle" else _book(node)
        for node in root[:]
        if node.tag in {"PubmedArticle", "PubmedBookArticle"}
    )
    return ParseResult(source=SOURCE, records=records, refused=refused)


def parse_update_file(body: bytes) -> tuple[ParseResult, list[str]]:
    """One (uncompressed) baseline or update file of PubMed's annual baseline: a
    ``PubmedArticleSet`` whose records :func:`parse` reads, and the record ids (``pmid:N``)
    its ``DeleteCitation`` elements delete, in document order. A deleted PMID that is not a
    citable id is a refusal of the result, never a silent drop."""
    root = parse_xml(body, what="a PubMed baseline or update file (PubmedArticleSet)")
    tag = root.tag if isinstance(root.tag, str) else ""
    if tag != "PubmedArticleSet":
        raise ParseError(f"expected a PubmedArticleSet but got <{tag}>")
    result = _article_set(root)
    deleted: list[str] = []
    for node in root[:]:
        if node.tag != "DeleteCitation":
            continue
        for pmid in node[:]:
            if pmid.tag != "PMID":
                continue
            rid = f"pmid:{text_of(pmid)}"
            refusal = citable.refusal(rid)
            if refusal is None:
                deleted.append(rid)
            else:
                result.refused.append(refusal)
    return result, deleted


def _parse_esearch_json(text: str) -> ParseResult:
    data = load_json(text, what="PubMed esearch JSON")
    if not isinstance(data, dict):
        raise ParseError("expected PubMed esearch JSON (an object with 'esearchresult')")
    if "error" in data and "esearchresult" not in data:
        raise ParseError(f"NCBI answered with an error: {shape.snippet(data['error'])}")
    result = data.get("esearchresult")
    if not isinstance(result, dict):
        raise ParseError("expected PubMed esearch JSON (an object with 'esearchresult')")
    if "ERROR" in result:
        raise ParseError(f"NCBI esearch error: {shape.snippet(result['ERROR'])}")
    ids, refused = _citable_ids(shape.strs(SOURCE, "esearchresult.idlist", result.get("idlist")))
    count = shape.opt_int(SOURCE, "esearchresult.count", result.get("count"))
    start = shape.opt_int(SOURCE, "esearchresult.retstart", result.get("retstart")) or 0
    meta = {
        k: shape.opt_id(SOURCE, f"esearchresult.{k}", result[k])
        for k in ("webenv", "querykey")
        if k in result
    }
    return ParseResult(
        source=SOURCE,
        ids=ids,
        count=count,
        next=_next_start(start, len(ids) + len(refused), count),
        meta=meta,
        refused=refused,
    )


def _citable_ids(ids: Sequence[str]) -> tuple[list[str], list[Refusal]]:
    """The PMIDs of an esearch answer that are valid pmid ids, and the refused rest."""
    return citable.partition(ids, lambda pmid: citable.refusal(f"pmid:{pmid}"))


def _parse_esearch_xml(root: Element) -> ParseResult:
    errors = [text_of(e) for e in root.findall("ERROR")]
    if errors:
        raise ParseError(f"NCBI esearch error: {errors[0][:200]}")
    ids, refused = _citable_ids([text_of(i) for i in root.findall("IdList/Id")])
    count = _int(text_of(root.find("Count")))
    start = _int(text_of(root.find("RetStart"))) or 0
    meta = {}
    if root.find("WebEnv") is not None:
        meta["webenv"] = text_of(root.find("WebEnv"))
        meta["querykey"] = text_of(root.find("QueryKey"))
    return ParseResult(
        source=SOURCE,
        ids=ids,
        count=count,
        next=_next_start(start, len(ids) + len(refused), count),
        meta=meta,
        refused=refused,
    )


def _next_start(start: int, got: int, count: int | None) -> str | None:
    following = start + got
    if count is None or got == 0 or following >= min(count, ESEARCH_CAP):
        return None
    return str(following)


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


Children = dict[object, list[Element]]
_NONE: tuple[Element, ...] = ()  # groups.get(tag, _NONE): no such children
_YEAR = re.compile(r"\b(1[6-9]\d\d|2\d\d\d)\b")


def _children(node: Element) -> Children:
    """The children of ``node`` by tag, in document order: one pass over the children instead
    of one ``find()`` per name (``find("A")`` is ``_first(groups, "A")``)."""
    groups: Children = {}
    for child in node[:]:  # a slice: much cheaper than an lxml child iterator
        group = groups.get(child.tag)
        if group is None:
            groups[child.tag] = [child]
        else:
            group.append(child)
    return groups


def _first(groups: Children, tag: str) -> Element | None:
    group = groups.get(tag)
    return group[0] if group else None


def _first_child(node: Element, tag: str) -> Element | None:
    """``node.find(tag)`` for a plain tag name: the first child with that tag."""
    for child in node[:]:
        if child.tag == tag:
            return child
    return None


def _first_under(parents: Sequence[Element], tag: str) -> Element | None:
    """``node.find("P/tag")`` given ``parents``, the node's P children: the first ``tag``
    child of the first P that has one."""
    for parent in parents:
        found = _first_child(parent, tag)
        if found is not None:
            return found
    return None


def _all_under(parents: Sequence[Element], tag: str) -> list[Element]:
    """``node.findall("P/tag")`` given ``parents``, the node's P children."""
    return [child for parent in parents for child in parent[:] if child.tag == tag]


def _year(*dates: Element | None) -> int | None:
    for date in dates:
        if date is None:
            continue
        found = _YEAR.search(text_of(_first_child(date, "Year")) or text_of(date))
        if found:
            return int(found.group(1))
    return None


def _authors(author_list: Element | None) -> list[str]:
    if author_list is None:
        return []
    names = []
    for author in author_list[:]:
        if author.tag != "Author":
            continue
        # the first child of each tag, as find() would give it
        collective = last = initials = fore = None
        for child in author[:]:
            tag = child.tag
            if tag == "LastName":
                last = child if last is None else last
            elif tag == "ForeName":
                fore = child if fore is None else fore
            elif tag == "Initials":
                initials = child if initials is None else initials
            elif tag == "CollectiveName":
                collective = child if collective is None else collective
        if collective is not None:
            name = text_of(collective)
            if name:
                names.append(name)
                continue
        name = f"{text_of(last)} {text_of(initials) or text_of(fore)}".strip()
        if name:
            names.append(name)
    return names


def _abstract(abstract: Element | None, passages: list[dict[str, str]]) -> None:
    """Append the abstract's passages (as the fields of a Passage) to ``passages``."""
    if abstract is None:
        return
    number = 0
    for node in abstract[:]:
        if node.tag != "AbstractText":
            continue
        text = text_of(node)
        if not text:
            continue
        label = node.get("Label")
        label = clean(label) if label else ""
        if not label:
            category = node.get("NlmCategory")
            label = clean(category) if category else ""
        number += 1
        passages.append(
            {"path": f"abstract.{number}", "section": label or "Abstract", "text": text}
        )


def _ids(id_list: Element | None) -> dict[str, str]:
    ids: dict[str, str] = {}
    if id_list is None:
        return ids
    for node in id_list[:]:
        if node.tag != "ArticleId":
            continue
        kind = (node.get("IdType") or "").lower()
        value = text_of(node)
        if kind and value and kind not in ids:
            ids[kind] = value
    return ids


def _relations(lists: Sequence[Element]) -> tuple[list[dict[str, str | None]], set[str]]:
    """Relations (as the fields of a Relation) from the ``CommentsCorrectionsList`` elements."""
    relations: list[dict[str, str | None]] = []
    seen_types: set[str] = set()
    for node in _all_under(lists, "CommentsCorrections"):
        ref_type = clean(node.get("RefType") or "")
        kind = relation_kind(ref_type)
        if not kind:
            continue
        seen_types.add(ref_type)
        ref_source = text_of(_first_child(node, "RefSource"))
        pmid = text_of(_first_child(node, "PMID"))
        doi = _DOI_IN_TEXT.search(ref_source + " ")
        if pmid:
            target = f"pmid:{pmid}"
        elif doi:
            target = f"doi:{doi.group(1).lower()}"
        else:
            continue  # some notices carry no identifier; the flag still counts (seen_types)
        relations.append(
            {"kind": kind, "target": target, "source": SOURCE, "detail": ref_source or None}
        )
    return relations, seen_types


def _flags_and_type(pub_types: list[str], ref_types: set[str]) -> tuple[dict[str, bool], str]:
    """The Flags fields and the content type."""
    lowered = {p.lower() for p in pub_types}
    flags = {
        "retracted": "retracted publication" in lowered or not _RETRACTING.isdisjoint(ref_types),
        "expression_of_concern": "ExpressionOfConcernIn" in ref_types,
        "preprint": "preprint" in lowered,
    }
    for pub_type, content_type in CONTENT_TYPES:
        if pub_type in lowered:
            return flags, content_type
    return flags, "article"


def _doi_from_elocation(locations: Sequence[Element]) -> str | None:
    for node in locations:
        if (node.get("EIdType") or "").lower() == "doi":
            return text_of(node) or None
    return None


def _other_abstract(others: Sequence[Element]) -> Element | None:
    """``find("OtherAbstract[@Language='eng']")``, else the first ``OtherAbstract``."""
    for other in others:
        if other.get("Language") == "eng":
            return other
    return others[0] if others else None


def _article(node: Element) -> Record | Refusal:
    # The Record is validated from plain fields: pydantic builds the nested models in one
    # call (same models, same fields set, faster than one __init__ per Passage)
    parts = _children(node)
    citation = _first(parts, "MedlineCitation")
    if citation is None:
        raise ParseError("PubmedArticle without MedlineCitation")
    cited = _children(citation)
    pmid = text_of(_first(cited, "PMID"))
    refusal = citable.refusal(f"pmid:{pmid}")
    if refusal is not None:
        return refusal
    article = _first(cited, "Article")
    if article is None:
        raise ParseError(f"PubMed record {pmid} has no Article element")
    fields = _children(article)
    title = text_of(_first(fields, "ArticleTitle")) or text_of(_first(fields, "VernacularTitle"))
    passages = [{"path": "title", "section": "Title", "text": title}] if title else []
    abstract = _first(fields, "Abstract")
    if abstract is None:
        abstract = _other_abstract(cited.get("OtherAbstract", _NONE))
    _abstract(abstract, passages)
    pub_types = [
        text_of(p) for p in _all_under(fields.get("PublicationTypeList", _NONE), "PublicationType")
    ]
    relations, ref_types = _relations(cited.get("CommentsCorrectionsList", _NONE))
    flags, content_type = _flags_and_type(pub_types, ref_types)
    pubmed_data = parts.get("PubmedData", _NONE)
    ids = _ids(_first_under(pubmed_data, "ArticleIdList"))
    journal = _first(fields, "Journal")
    journal_parts = _children(journal) if journal is not None else {}
    metadata: dict[str, object] = {}
    status_pub = text_of(_first_under(pubmed_data, "PublicationStatus"))
    if status_pub:
        metadata["publication_status"] = status_pub
    return Record.model_validate(
        {
            "record_id": f"pmid:{pmid}",
            "source": SOURCE,
            "title": title,
            "doi": (
                ids.get("doi") or _doi_from_elocation(fields.get("ELocationID", _NONE)) or None
            ),
            "pmid": pmid,
            "pmcid": citable.pmcid(ids.get("pmc") or ids.get("pmcid")),
            "year": _year(
                _first_under(journal_parts.get("JournalIssue", _NONE), "PubDate"),
                _first(fields, "ArticleDate"),
            ),
            "journal": text_of(_first(journal_parts, "Title")) if journal is not None else None,
            "authors": _authors(_first(fields, "AuthorList")),
            "publication_types": pub_types,
            "content_type": content_type,
            "status": citation.get("Status"),
            "flags": flags,
            "relations": relations,
            "passages": passages,
            "metadata": metadata,
            "licence": licences.UNKNOWN,
            "licence_raw": _copyright(abstract),
        }
    )


def _copyright(abstract: Element | None) -> str | None:
    """The abstract's ``CopyrightInformation``, kept as the raw licence value (free text)."""
    node = _first_child(abstract, "CopyrightInformation") if abstract is not None else None
    return licences.cut(text_of(node)) if node is not None else None


def _book(node: Element) -> Record | Refusal:
    document = _first_child(node, "BookDocument")
    if document is None:
        raise ParseError("PubmedBookArticle without BookDocument")
    fields = _children(document)
    pmid = text_of(_first(fields, "PMID"))
    refusal = citable.refusal(f"pmid:{pmid}")
    if refusal is not None:
        return refusal
    book = _first(fields, "Book")
    book_parts = _children(book) if book is not None else {}
    book_title = text_of(_first(book_parts, "BookTitle")) if book is not None else ""
    chapter = text_of(_first(fields, "ArticleTitle"))
    title = chapter or book_title
    passages = [{"path": "title", "section": "Title", "text": title}] if title else []
    _abstract(_first(fields, "Abstract"), passages)
    pub_types = [text_of(p) for p in fields.get("PublicationType", _NONE)]
    relations, ref_types = _relations(fields.get("CommentsCorrectionsList", _NONE))
    flags, _ = _flags_and_type(pub_types, ref_types)
    ids = _ids(_first(fields, "ArticleIdList"))
    book_data = [child for child in node[:] if child.tag == "PubmedBookData"]
    ids.update(_ids(_first_under(book_data, "ArticleIdList")))
    authors = _authors(_first(fields, "AuthorList"))
    if not authors and book is not None:
        authors = _authors(_first(book_parts, "AuthorList"))
    metadata: dict[str, object] = {"book_title": book_title} if book_title else {}
    publisher = (
        text_of(_first_under(book_parts.get("Publisher", _NONE), "PublisherName"))
        if book is not None
        else ""
    )
    if publisher:
        metadata["publisher"] = publisher
    return Record.model_validate(
        {
            "record_id": f"pmid:{pmid}",
            "source": SOURCE,
            "title": title,
            "doi": ids.get("doi"),
            "pmid": pmid,
            "pmcid": citable.pmcid(ids.get("pmc") or ids.get("pmcid")),
            "year": _year(_first(book_parts, "PubDate") if book is not None else None),
            "journal": book_title or None,
            "authors": authors,
            "publication_types": pub_types,
            "content_type": "book_chapter" if chapter else "book",
            "flags": flags,
            "relations": relations,
            "passages": passages,
            "metadata": metadata,
        }
    )
