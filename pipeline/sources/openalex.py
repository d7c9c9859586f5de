"""OpenAlex works (``/works?filter=doi:A|B|…`` by DOI, ``/works?search=…`` by title).

Each work becomes an ``openalex:W…`` record (its OpenAlex id; ``doi:`` records are
Crossref's): ``title``, and ``abstract.1`` rebuilt from ``abstract_inverted_index`` (each
word at each of its positions). Fields: ``doi`` (``https://doi.org/`` dropped, lower case),
``ids.pmid`` / ``ids.pmcid`` (URLs or bare, normalised to ``N`` / ``PMCN``),
``publication_year``, ``primary_location.source.display_name`` as the journal,
``authorships[].author.display_name`` (else ``raw_author_name``), ``type``. Flags:
``is_retracted: true`` → ``retracted`` True, anything else unknown (OpenAlex's silence is
not a clean bill, as Crossref's is not); ``type: preprint`` → ``preprint`` True, another type
False; ``expression_of_concern`` unknown.

By DOI: one list request ORs up to :data:`DOI_BATCH` DOIs with ``|`` (OpenAlex's cap on the
values of one filter, and ``per-page`` at most 100); a DOI OpenAlex does not know is simply
absent from the answer. By title: ``search=<title>``, ``per-page`` = the query's limit (at
most :data:`TITLE_LIMIT`), one page, nearest first. An OpenAlex error body (``{"error": …,
"message": …}``) is a :class:`~pipeline.errors.ParseError`, never an empty answer.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Flags, ParseResult, Passage, Record
from pipeline.sources import jsonshape as shape
from pipeline.sources.base import ById, Plugin, Rate, Request, Search, Shapes
from pipeline.sources.markup import strip_markup
from pipeline.sources.paging import send
from pipeline.sources.spec_types import DOI, Strict, id_list, lower
from pipeline.xmlsafe import load_json

SOURCE = "openalex"
BASE = "https://api.openalex.org"
WORKS_URL = f"{BASE}/works"
DOI_BATCH = 50  # DOIs OR-ed with | in one filter (OpenAlex documents at most 100 values)
TITLE_LIMIT = 25  # works one title search asks for (one page)
WORK_ID = re.compile(r"^W[1-9][0-9]{0,14}$")
_DOI_URL = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", re.IGNORECASE)
_TAIL_DIGITS = re.compile(r"([0-9]+)/?$")
_WORD_LIMIT = 20_000  # positions of an inverted abstract read (a hostile index cannot grow)


def _doi(value: str | None) -> str | None:
    text = _DOI_URL.sub("", (value or "").strip()).lower()
    return text or None


def _pmid(value: str | None) -> str | None:
    found = _TAIL_DIGITS.search(value or "")
    return found.group(1).lstrip("0") or None if found else None


def _pmcid(value: str | None) -> str | None:
    found = _TAIL_DIGITS.search(value or "")
    digits = found.group(1).lstrip("0") if found else ""
    return f"PMC{digits}" if digits else None


def _abstract(where: str, value: object) -> str:
    """The abstract an ``abstract_inverted_index`` spells (``{"word": [positions…]}``)."""
    index = shape.opt_obj(SOURCE, where, value)
    words: dict[int, str] = {}
    for word, positions in index.items():
        for at in shape.arr(SOURCE, shape.key(where, word), positions):
            if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at < _WORD_LIMIT:
                raise shape.wrong(SOURCE, shape.key(where, word), "positions 0-19999", at)
            words[at] = word
    return " ".join(words[n] for n in sorted(words))


def _authors(where: str, item: dict[str, Any]) -> list[str]:
    names = []
    for at, authorship in shape.objs(SOURCE, f"{where}.authorships", item.get("authorships")):
        author = shape.opt_obj(SOURCE, f"{at}.author", authorship.get("author"))
        name = shape.opt_str(SOURCE, f"{at}.author.display_name", author.get("display_name"))
        raw = shape.opt_str(SOURCE, f"{at}.raw_author_name", authorship.get("raw_author_name"))
        if (name or raw or "").strip():
            names.append((name or raw or "").strip())
    return names


def _record(where: str, item: dict[str, Any]) -> Record:
    raw_id = shape.text(SOURCE, f"{where}.id", item.get("id")).rsplit("/", 1)[-1]
    if not WORK_ID.match(raw_id):
        raise shape.wrong(SOURCE, f"{where}.id", "an OpenAlex work id (…/W + digits)", raw_id)
    title = shape.opt_str(SOURCE, f"{where}.title", item.get("title")) or shape.opt_str(
        SOURCE, f"{where}.display_name", item.get("display_name")
    )
    title = " ".join(strip_markup(title or "").split())
    ids = shape.opt_obj(SOURCE, f"{where}.ids", item.get("ids"))
    location = shape.opt_obj(SOURCE, f"{where}.primary_location", item.get("primary_location"))
    venue = shape.opt_obj(SOURCE, f"{where}.primary_location.source", location.get("source"))
    journal = shape.opt_str(
        SOURCE, f"{where}.primary_location.source.display_name", venue.get("display_name")
    )
    work_type = shape.opt_str(SOURCE, f"{where}.type", item.get("type"))
    retracted = item.get("is_retracted")
    if retracted is not None and not isinstance(retracted, bool):
        raise shape.wrong(SOURCE, f"{where}.is_retracted", "a boolean", retracted)
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    abstract = _abstract(f"{where}.abstract_inverted_index", item.get("abstract_inverted_index"))
    if abstract:
        passages.append(Passage(path="abstract.1", section="Abstract", text=abstract))
    preprint = None if work_type is None else work_type == "preprint"
    return Record(
        record_id=f"openalex:{raw_id}",
        source=SOURCE,
        title=title,
        doi=_doi(shape.opt_str(SOURCE, f"{where}.doi", item.get("doi"))),
        pmid=_pmid(shape.opt_str(SOURCE, f"{where}.ids.pmid", ids.get("pmid"))),
        pmcid=_pmcid(shape.opt_str(SOURCE, f"{where}.ids.pmcid", ids.get("pmcid"))),
        year=shape.opt_int(SOURCE, f"{where}.publication_year", item.get("publication_year")),
        journal=" ".join(journal.split()) if journal else None,
        authors=_authors(where, item),
        publication_types=[work_type] if work_type else [],
        content_type="preprint" if preprint else (work_type or "article"),
        flags=Flags(retracted=True if retracted else None, preprint=preprint),
        passages=passages,
    )


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Parse an OpenAlex work list (``{"meta", "results"}``) or one work (``{"id": …}``);
    every field read is type-checked (:mod:`pipeline.sources.jsonshape`)."""
    del url
    data = load_json(body, what="OpenAlex works JSON")
    if not isinstance(data, dict):
        raise ParseError(f"expected OpenAlex works JSON (an object), got {shape.kind(data)}")
    if "error" in data and "results" not in data:
        said = shape.snippet(data.get("message") or data.get("error"))
        raise ParseError(f"OpenAlex answered with an error: {said}")
    if "results" in data:
        items = list(shape.objs(SOURCE, "results", data["results"]))
        meta = shape.opt_obj(SOURCE, "meta", data.get("meta"))
        count = shape.opt_int(SOURCE, "meta.count", meta.get("count"))
    elif "id" in data:
        items, count = [("work", data)], 1
    else:
        raise ParseError(
            "expected an OpenAlex work list ('results') or one work ('id'), got neither"
        )
    records = [_record(where, item) for where, item in items]
    return ParseResult(
        source=SOURCE, records=records, ids=[r.record_id for r in records], count=count
    )


# -- harvest ---------------------------------------------------------------------------------
def fetch_works(client: HttpClient, dois: list[str]) -> list[Record]:
    """The works of ``dois`` (at most :data:`DOI_BATCH`, none holding a ``|`` or ``,``) in
    one ``filter=doi:A|B|…`` request; a DOI OpenAlex does not know is absent."""
    wanted = list(dict.fromkeys(d.strip().lower() for d in dois))
    if not wanted:
        return []
    if len(wanted) > DOI_BATCH or any(c in d for d in wanted for c in "|,"):
        raise TerminalHarvestError(
            f"cannot ask OpenAlex for {len(wanted)} DOIs in one filter: at most {DOI_BATCH}, "
            "none holding a '|' or ','"
        )
    params: dict[str, str | int] = {
        "filter": "doi:" + "|".join(wanted),
        "per-page": max(len(wanted), 1),
    }
    response = send(client, SOURCE, Request(WORKS_URL, params))
    result = parse(response.content)
    client.report_refused(SOURCE, result.refused)
    return result.records


def search_title(client: HttpClient, title: str, limit: int) -> list[Record]:
    """The works nearest ``title`` (``search=``, one page of at most ``limit``)."""
    params: dict[str, str | int] = {"search": title, "per-page": min(limit, TITLE_LIMIT)}
    response = send(client, SOURCE, Request(WORKS_URL, params))
    return parse(response.content).records[:limit]


# -- the plug-in -------------------------------------------------------------------------------
class OpenAlexTitle(Strict):
    title: str = Field(min_length=1, max_length=2000)
    limit: Annotated[int, Field(ge=1, le=TITLE_LIMIT, strict=True)] = 5


class OpenAlexSpec(Strict):
    """The ``[openalex]`` table of a corpus spec."""

    dois: Annotated[
        list[str],
        id_list(DOI, "a DOI (10.NNNN/suffix, printable ASCII without blanks or ',')"),
        BeforeValidator(lower),
    ] = Field(default_factory=list)
    titles: list[OpenAlexTitle] = Field(default_factory=list)


def _searches(options: OpenAlexSpec) -> list[Search]:
    return [
        Search(
            f"search {q.title!r}",
            q.title,
            lambda client, q=q: search_title(client, q.title, q.limit),
        )
        for q in options.titles
    ]


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("openalex",),
    base_url=BASE,
    parse_body=parse,
    # at most 100 requests/s for everyone (developers.openalex.org, Authentication); we ask
    # far less: a daily allowance, not the rate, is what runs out
    rate=Rate("api.openalex.org", 10.0),
    options=OpenAlexSpec,
    rank=95,  # after Crossref: its works by DOI come last
    counts_ids=True,
    shapes=Shapes(hosts=(("api.openalex.org", ""),)),
    by_id={
        "doi": ById(
            "works",
            DOI_BATCH,
            lambda client, ids: fetch_works(client, ids),
            answers=lambda record: f"doi:{record.doi}",
            refresh=False,
        )
    },
    polite_params=lambda settings: {"mailto": settings.email} if settings.email else {},
    table_searches=_searches,
    table_ids=lambda options: {"doi": options.dois},
)
