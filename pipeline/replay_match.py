"""What a by-id request asks, and the one answer the held parts of it make (pure).

Every source that can be replayed by meaning says how in its
:class:`~pipeline.sources.base.ReplayShape` (``PLUGIN.replay``): the by-id request kinds it
answers (:class:`~pipeline.sources.base.ReplayKind`), how a request's meaning is read from
its URL, and the answer's format. This module is the one generic reader over the registry,
and names no source:

* :func:`asked_of` finds the source whose API a URL belongs to (its ``shapes.hosts``),
  reads the query (or, where the shape ``posts``, the form of a POST without a query),
  credential and polite parameters ignored and a repeated parameter refused, and asks the
  source's ``asked``. A request that deviates from its kind's grammar in any way (another
  parameter, another value, a page past the first) is no by-id request and is matched only
  by its exact key (:mod:`pipeline.replay`). The built-in kinds' grammars are in
  docs/sources.md ("Importing someone else's responses") and in each source module.
* An id is normalised as its source spells it in a record (a PMID's digits, ``NCT…`` and
  ``PPR…`` upper case, a set id and a DOI lower case): :func:`normal_id`.
* :func:`answer` merges the parts held for the ids asked into one body in that API's own
  format, in the order the ids were asked; ids held as *absent* (an answer that was asked
  for them and did not hold them) are left out, as the API left them out.
* A part of a kind with a ``serves`` test (ClinicalTrials.gov's ``fields`` projection) answers
  only a request it covers (:func:`serves`).

:data:`KINDS` maps every registered kind to its source and what its ids are called; it reads
the registry when asked, so a source registered later is in it. The constants below are the
names of the built-in kinds, for callers that name one (the modules of those sources define
the kinds themselves); nothing here branches on them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import parse_qsl, urlsplit

from pipeline.redact import CREDENTIAL_PARAMS
from pipeline.sources import sources
from pipeline.sources.base import Asked, Part, ReplayKind, ReplayShape, Source

__all__ = ["KINDS", "Asked", "Part", "answer", "asked_of", "normal_id", "serves"]

PUBMED_EFETCH = "pubmed-efetch"
PUBTATOR3_EXPORT = "pubtator3-export"
EUROPEPMC_PPR = "europepmc-ppr"
CROSSREF_UPDATES = "crossref-updates"
CLINICALTRIALS_IDS = "clinicaltrials-ids"
OPENFDA_SETIDS = "openfda-setids"


def replay_shape(plugin: Source) -> ReplayShape | None:
    """A source's replay shape (None: it has none, and no raw body of it is importable)."""
    return getattr(plugin, "replay", None)


def registered_kinds() -> dict[str, tuple[Source, ReplayKind]]:
    """Every by-id kind of the registered sources, registry order: name → (source, kind)."""
    found: dict[str, tuple[Source, ReplayKind]] = {}
    for plugin in sources():
        shape = replay_shape(plugin)
        for kind in shape.kinds if shape is not None else ():
            found.setdefault(kind.name, (plugin, kind))
    return found


def kind_of(name: str) -> ReplayKind | None:
    """The registered kind called ``name``, or None."""
    found = registered_kinds().get(name)
    return found[1] if found is not None else None


class _Kinds(Mapping[str, tuple[str, str]]):
    """kind → (source name, what its ids are), read from the registry when asked."""

    def __getitem__(self, name: str) -> tuple[str, str]:
        plugin, kind = registered_kinds()[name]
        return plugin.name, kind.what

    def __iter__(self) -> Iterator[str]:
        return iter(registered_kinds())

    def __len__(self) -> int:
        return len(registered_kinds())


KINDS: Mapping[str, tuple[str, str]] = _Kinds()


def source_of_url(url: str) -> Source | None:
    """The registered source whose API a URL belongs to (its ``shapes.hosts``: host and path
    prefix, :class:`pipeline.sources.base.Shapes`), or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    for plugin in sources():
        if any(host == h and parts.path.startswith(p) for h, p in plugin.shapes.hosts):
            return plugin
    return None


def normal_id(kind: str, raw: str) -> str | None:
    """``raw`` as the records of ``kind`` spell it, or None when it is no such id (or the
    kind is unknown)."""
    found = kind_of(kind)
    return found.normal(raw) if found is not None else None


def _params(text: str) -> dict[str, str] | None:
    """The parameters of a query or form, credentials dropped; None when one repeats."""
    found: dict[str, str] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        if key.lower() in CREDENTIAL_PARAMS:
            continue
        if key in found:
            return None
        found[key] = value
    return found


def asked_of(method: str, url: str, form: str | None = None) -> Asked | None:
    """The by-id request a method, URL and form make (module docstring), else None."""
    plugin = source_of_url(url)
    shape = replay_shape(plugin) if plugin is not None else None
    if shape is None:
        return None
    parts = urlsplit(url)
    method = method.upper()
    if method == "POST" and shape.posts and not parts.query:
        params = _params(form or "")
    elif method == "GET":
        params = _params(parts.query)
    else:
        return None
    if params is None:
        return None
    return shape.asked(parts.path, params)


def serves(part: Part, fields: tuple[str, ...] | None) -> bool:
    """Whether a part can answer a request for ``fields`` (module docstring); an absent id
    answers any (the API did not hold the record at all)."""
    if not part.held:
        return True
    kind = kind_of(part.kind)
    return kind is None or kind.serves is None or kind.serves(part, fields)


def answer(asked: Asked, parts: Sequence[Part]) -> tuple[int, str, str]:
    """``(status, content type, body)``: the held parts for ``asked`` as one answer in the
    API's format (``parts`` are those of the ids asked, in order; absent ones are left out)."""
    kind = kind_of(asked.kind)
    if kind is None:
        raise ValueError(f"no answer format for {asked.kind!r}")
    return kind.answer(asked, [p for p in parts if p.held])
