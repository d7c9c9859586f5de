"""Crossref REST works: the plug-in, its requests for works and its notices enrichment.

Three modules, one idea each:

* :mod:`pipeline.sources.crossref_works` parses works JSON (pure): each work a ``doi:``
  record with its relations, flags and licence, and the notices a list names;
* :mod:`pipeline.sources.crossref_notices` asks the update notices of many DOIs in one
  ``updates:`` filter and merges notices into records (:func:`apply_relations`,
  :func:`with_notices`);
* this module: works by DOI (:func:`fetch_works`, ORed ``doi:`` filters) and by title
  (:func:`search_title`), the ``[crossref]`` spec table, the :class:`Updates` enrichment and
  the plug-in. The names of the other two that callers use are re-exported here.

Crossref's silence is not a clean bill: without a retraction among the updates,
``retracted`` stays ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field, StrictBool

from pipeline.errors import TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Record, Relation
from pipeline.sources.base import ById, Plugin, Rate, Request, Search, Shapes
from pipeline.sources.crossref_notices import (
    UPDATES_BATCH,
    WORKS_URL,
    UpdatesPages,
    apply_relations,
    fetch_update_notices,
    with_notices,
)
from pipeline.sources.crossref_replay import REPLAY
from pipeline.sources.crossref_works import ROWS, SOURCE, _doi, parse
from pipeline.sources.paging import send
from pipeline.sources.spec_types import DOI, Strict, id_list, lower

if TYPE_CHECKING:
    from pipeline.sources.base import EnrichContext

__all__ = [
    "DOI_BATCH",
    "ROWS",
    "SOURCE",
    "UPDATES_BATCH",
    "WORKS_URL",
    "CrossrefSpec",
    "CrossrefTitle",
    "Updates",
    "UpdatesPages",
    "apply_relations",
    "fetch_update_notices",
    "fetch_works",
    "parse",
    "search_title",
    "with_notices",
]

# DOIs OR-ed into one ``filter=doi:…,doi:…`` request: the repeated filter is ORed (API-FACTS
# §4), ``rows`` may be 1000, but the URL grows ~40 bytes a DOI; 50 keeps it near 2 kB
DOI_BATCH = 50


def fetch_works(client: HttpClient, dois: Sequence[str]) -> list[Record]:
    """The works of ``dois`` (at most :data:`DOI_BATCH`, none holding a ``,``) in one
    ``/works?filter=doi:…,doi:…`` request; a DOI Crossref does not know is simply absent."""
    wanted = list(dict.fromkeys(_doi(d) for d in dois))
    if not wanted:
        return []
    if len(wanted) > DOI_BATCH or any("," in d for d in wanted):
        raise TerminalHarvestError(
            f"cannot ask Crossref for {len(wanted)} DOIs in one filter: at most {DOI_BATCH}, "
            "none holding a ','"
        )
    params: dict[str, str | int] = {
        "filter": ",".join(f"doi:{d}" for d in wanted),
        "rows": len(wanted),
    }
    response = send(client, SOURCE, Request(WORKS_URL, params))
    result = parse(response.content, url=str(response.request.url))
    client.report_refused(SOURCE, result.refused)
    return result.records


def search_title(client: HttpClient, title: str, limit: int) -> list[Record]:
    """The works nearest ``title`` by Crossref's ``query.bibliographic`` (one page of at most
    ``limit``, best first): the title search of ``citeseal check --online``."""
    params: dict[str, str | int] = {"query.bibliographic": title, "rows": limit}
    response = send(client, SOURCE, Request(WORKS_URL, params))
    result = parse(response.content, url=str(response.request.url))
    client.report_refused(SOURCE, result.refused)
    return result.records[:limit]


# -- the plug-in -------------------------------------------------------------------------------
DOI_CACHE = 4096  # DOIs whose notices a harvest remembers (a pmid and its pmcid share one)


class CrossrefTitle(Strict):
    """A title to search (``query.bibliographic``), at most ``limit`` works."""

    title: str = Field(min_length=1, max_length=2000)
    limit: Annotated[int, Field(ge=1, le=ROWS, strict=True)] = 5


class CrossrefSpec(Strict):
    """The ``[crossref]`` table of a corpus spec."""

    updates: StrictBool = False  # update notices (retraction, EoC, correction) for every DOI
    # title searches (citeseal check --online); None, not [], so that a spec without them
    # keeps its canonical form and its hash
    titles: list[CrossrefTitle] | None = None
    dois: Annotated[
        list[str],
        id_list(DOI, "a DOI (10.NNNN/suffix, printable ASCII without blanks or ',')"),
        BeforeValidator(lower),
    ] = Field(default_factory=list)


class Updates:
    """Enrichment: Crossref's update notices on every record with a DOI (``[crossref]
    updates = true``), :data:`UPDATES_BATCH` DOIs a request, a chunk's batches asked as many
    at once as Crossref allows in flight (:meth:`~pipeline.sources.base.EnrichContext.fan_out`);
    a batch that fails leaves the notices of each of its DOIs unknown (:func:`with_notices`)."""

    adds_records = False

    def enabled(self, spec: Any) -> bool:
        options = spec.options(SOURCE)
        return isinstance(options, CrossrefSpec) and options.updates

    def enrich(self, ctx: EnrichContext, records: list[Record]) -> tuple[list[Record], set[str]]:
        cache: dict[str, list[Relation] | None] = ctx.memo(SOURCE).setdefault("notices", {})
        if len(cache) > DOI_CACHE:
            cache.clear()
        dois = dict.fromkeys(r.doi.lower() for r in records if r.doi)
        asked = [d for d in dois if d not in cache]
        plain = [d for d in asked if "," not in d]
        odd = [[d] for d in asked if "," in d]  # no filter can name it: it fails on its own
        batches = [plain[i : i + UPDATES_BATCH] for i in range(0, len(plain), UPDATES_BATCH)]
        batches += odd

        def ask(batch: list[str]) -> dict[str, list[Relation]] | None:
            found = ctx.call(
                SOURCE,
                f"updates {', '.join(batch)}",
                lambda: fetch_update_notices(ctx.client, batch),
            )
            if found is not None:
                ctx.step(SOURCE, "updates", len(batch), f"{len(batch)} DOIs asked")
            return found

        # as many batches at once as Crossref allows in flight (its polite pool: 3)
        answers = ctx.fan_out(SOURCE, [lambda b=batch: ask(b) for batch in batches])
        for batch, found in zip(batches, answers, strict=True):
            for doi in batch:  # a failed batch: the notices of every DOI in it are unknown
                cache[doi] = None if found is None else found.get(doi, [])
        return with_notices(records, cache)


def _in_spec(spec: Any) -> bool:
    options = spec.options(SOURCE)
    return isinstance(options, CrossrefSpec) and bool(
        options.updates or options.dois or options.titles
    )


def _title_searches(options: CrossrefSpec) -> list[Search]:
    return [
        Search(
            f"search {q.title!r}",
            q.title,
            lambda client, q=q: search_title(client, q.title, q.limit),
        )
        for q in options.titles or ()
    ]


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("doi",),
    base_url="https://api.crossref.org",
    parse_body=parse,
    # list queries: 3/s and 3 in flight in the polite pool (with a mailto), 1/s and 1 in
    # flight without (the limits from December 2025, API-FACTS §4)
    rate=Rate(
        "api.crossref.org", 3.0, without_contact=1.0, concurrency=3, concurrency_without_contact=1
    ),
    options=CrossrefSpec,
    rank=90,  # after every other source: its works by DOI come last
    counts_ids=True,
    shapes=Shapes(hosts=(("api.crossref.org", ""),), json=(("message-type",),)),
    by_id={"doi": ById("works", DOI_BATCH, lambda client, ids: fetch_works(client, ids))},
    enrichment=Updates(),
    replay=REPLAY,
    polite_params=lambda settings: {"mailto": settings.email} if settings.email else {},
    table_searches=_title_searches,
    table_ids=lambda options: {"doi": options.dois},
    spec_test=_in_spec,
)
