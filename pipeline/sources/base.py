"""What a source is: the :class:`Source` Protocol every plug-in implements, and its parts.

A source is one module that defines one object satisfying :class:`Source` (the built-ins
define a :class:`Plugin`, a frozen dataclass of the parts) and is named in the registry
(:mod:`pipeline.sources`). Everything else reads the registry: the corpus spec (a source's
``options`` model is its ``[name]`` table), pacing (its :class:`Rate`), the HTTP client (its
base URL and polite parameters), ``citeseal parse`` (its parser and :class:`Shapes`), the
harvest (its searches, by-id fetches and enrichment).

The rules a source keeps:

* **Pure parts.** ``parse`` is a pure function of a body; a request is a value
  (:class:`Request`); paging is a pure step (:class:`Pager`: a response in, the next
  request or None out, with the records it refused). :func:`pipeline.sources.paging.walk`
  is the one loop that does the I/O for every source's pages.
* **Searches and by-id fetches are data** (:class:`Search`, :class:`ById`, :class:`Single`):
  the harvest (:class:`pipeline.harvest.Harvester`) judges every by-id answer the same way
  for every source (missing only on positive evidence, controls, the refresh). A source
  that can list everything it holds says so with a :class:`Listing` (its complete set of
  ids), and the lineage's records missing from it are withdrawn the same way.
* **Enrichment** (:class:`Enrichment`) adds to records of any source (annotations, notices)
  or adds records of its own (full text), through the harvest's :class:`EnrichContext`; a
  failed step marks the records it concerns incomplete, never clean.
* **Replay by meaning** (:class:`ReplayShape`, optional): how ``citeseal replay import``
  recognises a recorded body of the source, splits it into one part per record, and reads
  what a by-id request asks from its URL; how ``--replay`` merges parts into one answer.
  A source without one is not importable from raw bodies (its recorded wrappers are still
  kept as exact exchanges).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:  # pydantic models and the HTTP client load with the sources, not the CLI
    import httpx
    from pydantic import BaseModel

    from pipeline.http import HttpClient
    from pipeline.records import ParseResult, Record, Refusal
    from pipeline.settings import Settings

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True)
class Rate:
    """How fast one source's host may be asked (requests per second): ``per_second``, or
    ``with_key`` when the source's API key is set, or ``without_contact`` when no contact
    e-mail is (Crossref's public pool is slower than its polite pool). ``busy``: how the host
    says, inside an answer of an expected status, that it refused the request for its rate
    (NCBI's "API rate limit exceeded" in a 200 body): such an answer is retried like a 429
    and never recorded (None: the host says it with a status). ``concurrency``: how many
    requests the host allows in flight at once (``concurrency_without_contact`` without a
    contact e-mail); 1 unless the host's policy documents more (Crossref's polite pool: 3)."""

    host: str
    per_second: float
    with_key: float | None = None
    without_contact: float | None = None
    busy: Callable[[bytes], bool] | None = None
    concurrency: int = 1
    concurrency_without_contact: int | None = None

    def for_settings(self, settings: Settings, *, keyed: bool) -> float:
        if keyed and self.with_key is not None:
            return self.with_key
        if not settings.email and self.without_contact is not None:
            return self.without_contact
        return self.per_second

    def parallel_for(self, settings: Settings) -> int:
        """The requests the host allows in flight at once with these settings (at least 1)."""
        if not settings.email and self.concurrency_without_contact is not None:
            return max(1, self.concurrency_without_contact)
        return max(1, self.concurrency)


@dataclass(frozen=True)
class Request:
    """One HTTP request as a value: a GET with ``params``, or a POST of ``form``."""

    url: str
    params: Mapping[str, str | int] = field(default_factory=dict)
    form: Mapping[str, str] | None = None
    expect: tuple[int, ...] = (200,)


@dataclass(frozen=True)
class Step:
    """What a pager made of one response: the next request (None: done) and the records
    the parser refused in it (reported by the loop, as the answer arrives)."""

    next: Request | None
    refused: Sequence[Refusal] = ()


class Pager(Protocol[T_co]):
    """A sans-I/O walk over pages: ``first()`` is the first request (None: nothing to ask),
    ``step(response)`` reads one answer and says what to ask next, ``result()`` is what the
    walk found. No method does I/O; :func:`pipeline.sources.paging.walk` does."""

    def first(self) -> Request | None: ...

    def step(self, response: httpx.Response) -> Step: ...

    def result(self) -> T_co: ...


@dataclass(frozen=True)
class Listing:
    """Every record id a source holds now, complete: what a source that can list all it
    holds (a folder of files, not a search engine) answers in a ``lists`` :class:`Search`.

    The harvest withdraws the lineage's records of that source the listing no longer holds
    (:meth:`pipeline.harvest.Harvester.refresh`); a record it holds but that could not be
    read this time is a listed failure and keeps its last version. So a listing must name
    every id the source still has, whether or not it could be read: a source that cannot be
    sure of the whole (a subfolder it could not list) gives no listing, and nothing of it is
    withdrawn; a ``lists`` step that fails withdraws nothing either."""

    record_ids: frozenset[str]


@dataclass(frozen=True)
class Search:
    """One query of a spec table. ``run`` asks it (through the one paging loop) and returns
    records, or, with ``gives`` set, ids of that scheme to fetch by id (or records, when the
    search reads them itself: PubMed's history server); an iterator of such answers is
    delivered page by page, as it comes. With ``lists`` set it returns the source's
    :class:`Listing` instead. ``step`` names the request in failures; ``shown`` is the query
    as the harvest log shows it."""

    step: str
    shown: str
    run: Callable[[HttpClient], Sequence[Any] | Iterator[Sequence[Any]] | Listing]
    gives: str | None = None
    lists: bool = False


@dataclass(frozen=True)
class ById:
    """How records of one scheme are fetched by id. ``fetch`` puts at most ``per_request``
    ids in one request, and the harvest asks it for fewer at a time (room for the controls of
    a second asking); it delivers ``chunk`` ids at a time (None: its ``CHUNK``). ``answers``
    is the asked key a record answers (default: its own id); ``carried``: a record of the
    lineage carrying the asked id stands for it (a PMCID answered by a ``pmid:`` record)."""

    step: str
    per_request: int
    fetch: Callable[[HttpClient, list[str]], list[Record]]
    chunk: int | None = None  # None: the harvest's CHUNK
    answers: Callable[[Record], str] | None = None
    carried: bool = False
    refresh: bool = True  # the lineage's unseen records of this scheme are re-asked this way


@dataclass(frozen=True)
class Single:
    """A by-id fetch of one record per request that may have no answer (None): Europe PMC's
    full text. No answer is never a withdrawal (the harvest's rules)."""

    step: str  # "full text" → "full text PMC…"
    fetch: Callable[[HttpClient, str], Record | None]


class EnrichContext(Protocol):
    """What the harvest offers an enrichment (:class:`pipeline.harvest.Harvester`)."""

    @property
    def client(self) -> HttpClient: ...

    def call(self, source: str, step: str, call: Callable[[], T]) -> T | None:
        """Run one request-level call; a failure is reported and gives None."""
        ...

    def step(self, source: str, step: str, count: int, detail: str) -> None:
        """Log a harvest step (the harvest log's line)."""
        ...

    def fetch_each(self, source: str, scheme: str, ids: Sequence[str]) -> None:
        """Fetch and deliver records one by one through the source's :class:`Single`."""
        ...

    def fan_out(self, source: str, calls: Sequence[Callable[[], T]]) -> list[T]:
        """Run ``calls`` (each making requests to ``source``'s host), as many at once as the
        host allows in flight when the harvest may use threads, else one after another;
        their results, and their effects, in the order of ``calls``."""
        ...

    def memo(self, source: str) -> dict[str, Any]:
        """State an enrichment keeps for the length of one harvest (caches)."""
        ...


class Enrichment(Protocol):
    """How a source enriches the records of a harvest. Those that change records
    (``adds_records`` False: annotations, notices) run first, in registry order, then those
    that add records of their own (full text)."""

    adds_records: bool

    def enabled(self, spec: Any) -> bool:
        """Whether the corpus spec asks for it."""
        ...

    def enrich(self, ctx: EnrichContext, records: list[Record]) -> tuple[list[Record], set[str]]:
        """The records enriched, and the ids of those whose enrichment failed."""
        ...


@dataclass(frozen=True)
class Shapes:
    """How ``citeseal parse auto`` tells a body of this source: its URL (``hosts``: host and
    path prefix), the root element of an XML body (``xml``), the keys a JSON object has
    (``json``: each tuple must all be present; checked for every source before any
    ``sniff``), and a last ``sniff`` of decoded JSON."""

    hosts: tuple[tuple[str, str], ...] = ()
    xml: tuple[bytes, ...] = ()
    json: tuple[tuple[str, ...], ...] = ()
    sniff: Callable[[object], bool] | None = None


@dataclass(frozen=True)
class Asked:
    """A by-id request (:class:`ReplayShape`): its kind, the ids in the order asked, and
    (ClinicalTrials.gov) the ``fields`` asked, as a sorted tuple (None: the whole record)."""

    kind: str
    ids: tuple[str, ...]
    fields: tuple[str, ...] | None = None
    size: int | None = None  # the page size or limit asked (echoed in the answer's meta)


@dataclass(frozen=True)
class Part:
    """What is held for one id of one kind: its fragment (an XML element or a JSON value as
    text), or ``held`` False (an answer asked for it and did not hold it)."""

    kind: str
    ident: str
    held: bool
    fragment: str = ""
    fields: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Unit:
    """One record cut out of a recorded body, kept as a part of ``kind`` once the source's
    parser accepts it alone: ``text`` is the fragment kept, ``body`` what the parser reads
    (the fragment in its API's envelope; None: the fragment itself)."""

    kind: str
    text: str
    body: str | None = None
    fields: tuple[str, ...] | None = None


@dataclass
class Split:
    """What a :class:`ReplayShape` cut out of one body: units (each checked by the parser),
    parts placed as they are (no record of their own to parse: Crossref's notices of a DOI),
    notes, and why nothing of it can be placed (a ``reason``; its ids are then never
    recorded absent)."""

    units: list[Unit] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reason: str | None = None


@dataclass(frozen=True)
class ReplayKind:
    """One kind of by-id request a source answers: its ``name`` (``units/<name>/`` of an
    imported folder), what its ids are called in messages (``what``), the record scheme a
    part's record has (``scheme``), how an id is normalised as the records spell it
    (``normal``: None when it is no such id), the one answer a list of held parts makes in
    the API's format (``answer``: status, content type, body), and, for a kind whose parts
    remember a projection, whether a part serves the ``fields`` asked (``serves``; None:
    every held part serves every request)."""

    name: str
    what: str
    scheme: str
    normal: Callable[[str], str | None]
    answer: Callable[[Asked, Sequence[Part]], tuple[int, str, str]]
    serves: Callable[[Part, tuple[str, ...] | None], bool] | None = None


@dataclass(frozen=True)
class ReplayShape:
    """How ``citeseal replay import`` and ``--replay`` know a source's recorded bodies
    (docs/sources.md, "Writing a source"):

    * ``kinds``: the by-id request kinds it answers;
    * ``asked(path, params)``: the by-id request a URL path on one of its ``shapes.hosts``
      and its parameters (credentials dropped, no repeats) make, else None; ``posts``: such
      a request may be a POSTed form (URL without a query);
    * recognising a raw body: the local name of its XML root (``xml_roots``), a top-level
      key of a JSON object (``json_keys``, any one), a key of the first object of a JSON list
      (``list_keys``);
    * ``split(value, url, asked)``: the parsed XML root or JSON value cut into
      :class:`Split` units (``url`` None: a raw body);
    * ``items(value)``: the results a JSON answer lists, when its count says whether it is
      the whole answer (None: every by-id answer is whole);
    * ``kept``: statuses other than 200 kept as recorded exchanges (Europe PMC's 404 "no full
      text"); ``no_match``: a status other than 200 by which a by-id request is answered
      without any record (openFDA's 404);
    * ``raw_url(record_id)``: the URL whose answer a raw XML body is, from its first record's
      id (Europe PMC's ``fullTextXML`` of a PMCID; None: it has none).
    """

    kinds: tuple[ReplayKind, ...]
    asked: Callable[[str, dict[str, str]], Asked | None]
    split: Callable[[Any, str | None, Asked | None], Split]
    posts: bool = False
    xml_roots: tuple[str, ...] = ()
    json_keys: tuple[str, ...] = ()
    list_keys: tuple[str, ...] = ()
    items: Callable[[Any], list[Any]] | None = None
    kept: frozenset[int] = frozenset()
    no_match: int | None = None
    raw_url: Callable[[str], str | None] | None = None


def replay_ids(kind: ReplayKind, raws: Sequence[str]) -> tuple[str, ...] | None:
    """``raws`` as ids of ``kind``, normalised and deduplicated in order; None when one is no
    such id or none is given."""
    ids: dict[str, None] = {}
    for raw in raws:
        ident = kind.normal(raw)
        if ident is None:
            return None
        ids[ident] = None
    return tuple(ids) or None


def page_size(value: str | None) -> int | None:
    """A page size or limit parameter as a number (None: absent, or not digits)."""
    return int(value) if value is not None and value.isdigit() else None


class Source(Protocol):
    """One source (module docstring)."""

    @property
    def name(self) -> str: ...

    @property
    def schemes(self) -> tuple[str, ...]:
        """The ``scheme:`` of the records it gives."""
        ...

    @property
    def base_url(self) -> str:
        """Its public base URL (no trailing ``/``); ``CITESEAL_<NAME>_URL`` moves it."""
        ...

    @property
    def rate(self) -> Rate | None: ...

    @property
    def options(self) -> type[BaseModel] | None:
        """The model of its ``[name]`` table in a corpus spec (None: it has none)."""
        ...

    @property
    def rank(self) -> int:
        """Harvest order, lower first."""
        ...

    @property
    def counts_ids(self) -> bool:
        """Whether its progress total is the number of ids it fetches."""
        ...

    @property
    def shapes(self) -> Shapes: ...

    @property
    def by_id(self) -> Mapping[str, ById]: ...

    @property
    def singles(self) -> Mapping[str, Single]: ...

    @property
    def enrichment(self) -> Enrichment | None: ...

    @property
    def replay(self) -> ReplayShape | None:
        """How its recorded bodies are imported and replayed by meaning (None: not
        importable from raw bodies)."""
        ...

    def parse(self, body: str | bytes, *, url: str | None = None) -> ParseResult: ...

    def polite(self, settings: Settings) -> dict[str, str]:
        """The polite and credential parameters of its requests (to its own origin only)."""
        ...

    def keyed(self, settings: Settings) -> bool:
        """Whether its API key is set (a :class:`Rate` may then be faster)."""
        ...

    def in_spec(self, spec: Any) -> bool:
        """Whether a corpus spec harvests it (its table, or an enrichment it provides)."""
        ...

    def searches(self, options: Any) -> Sequence[Search]: ...

    def ids(self, options: Any) -> Mapping[str, Sequence[str]]:
        """The ids its table names, per scheme, in the order they are fetched."""
        ...


def _nothing(_settings: Settings) -> dict[str, str]:
    return {}


def _unkeyed(_settings: Settings) -> bool:
    return False


def _no_searches(_options: Any) -> Sequence[Search]:
    return ()


def _no_ids(_options: Any) -> Mapping[str, Sequence[str]]:
    return {}


@dataclass(frozen=True)
class Plugin:
    """A :class:`Source` made of its parts (what the built-in sources are)."""

    name: str
    schemes: tuple[str, ...]
    base_url: str
    parse_body: Callable[..., ParseResult]
    rate: Rate | None = None
    options: type[BaseModel] | None = None
    rank: int = 50
    counts_ids: bool = False
    shapes: Shapes = Shapes()
    by_id: Mapping[str, ById] = field(default_factory=dict)
    singles: Mapping[str, Single] = field(default_factory=dict)
    enrichment: Enrichment | None = None
    replay: ReplayShape | None = None
    polite_params: Callable[[Settings], dict[str, str]] = _nothing
    has_key: Callable[[Settings], bool] = _unkeyed
    table_searches: Callable[[Any], Sequence[Search]] = _no_searches
    table_ids: Callable[[Any], Mapping[str, Sequence[str]]] = _no_ids
    spec_test: Callable[[Any], bool] | None = None

    def parse(self, body: str | bytes, *, url: str | None = None) -> ParseResult:
        return self.parse_body(body, url=url)

    def polite(self, settings: Settings) -> dict[str, str]:
        return self.polite_params(settings)

    def keyed(self, settings: Settings) -> bool:
        return self.has_key(settings)

    def in_spec(self, spec: Any) -> bool:
        if self.spec_test is not None:
            return self.spec_test(spec)
        return spec.options(self.name) is not None

    def searches(self, options: Any) -> Sequence[Search]:
        return self.table_searches(options)

    def ids(self, options: Any) -> Mapping[str, Sequence[str]]:
        return self.table_ids(options)
