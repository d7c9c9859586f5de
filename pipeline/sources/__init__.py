"""The registry of sources: the one place that names them.

:data:`BUILTIN` lists the modules of the nine built-in sources (the six APIs of the corpus,
then arXiv and OpenAlex, which ``citeseal check --online`` asks, then the user's own
documents, ``local``), in registry order (the order
of every listing: a snapshot's sources table, the spec's sources). Each module defines
``PLUGIN``, an object satisfying :class:`pipeline.sources.base.Source`. Modules are imported
on first use, so importing this package loads no parser. :func:`register` adds a source of
one's own (docs/sources.md, "Writing a source"); :func:`registered` does so for the length
of a ``with`` block (tests).

Everything per source reads this registry: the corpus spec (:mod:`pipeline.harvest_spec`),
pacing (:mod:`pipeline.pacing`), base URLs (:mod:`pipeline.settings`), the client's polite
parameters (:mod:`pipeline.http`), ``citeseal parse`` and the harvest.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pydantic models load with the parsers, not with the CLI
    from pipeline.records import ParseResult
    from pipeline.sources.base import Source

BUILTIN: tuple[str, ...] = (
    "pipeline.sources.pubmed",
    "pipeline.sources.europepmc",
    "pipeline.sources.pubtator3",
    "pipeline.sources.crossref",
    "pipeline.sources.clinicaltrials",
    "pipeline.sources.openfda",
    "pipeline.sources.arxiv",
    "pipeline.sources.openalex",
    "pipeline.sources.local",
)
BUILTIN_NAMES: tuple[str, ...] = tuple(m.rsplit(".", 1)[1] for m in BUILTIN)
FILE_SOURCES: frozenset[str] = frozenset({"local"})
"""Built-in sources that read files, not an API: no base URL, no ``CITESEAL_<NAME>_URL``."""

_added: dict[str, Source] = {}
_loaded: dict[str, Source] = {}


class Parser(Protocol):
    def __call__(self, body: str | bytes, *, url: str | None = None) -> ParseResult: ...


def names() -> tuple[str, ...]:
    """The names of every registered source, built-ins first (no module is imported)."""
    return (*BUILTIN_NAMES, *_added)


def api_names() -> tuple[str, ...]:
    """The names of the registered sources that ask an API (a base URL), registry order: the
    built-ins but :data:`FILE_SOURCES`, and the added sources that have a ``base_url``."""
    added = tuple(name for name, plugin in _added.items() if plugin.base_url)
    return (*(n for n in BUILTIN_NAMES if n not in FILE_SOURCES), *added)


def source(name: str) -> Source:
    """The source called ``name`` (KeyError for an unknown name)."""
    if name in _added:
        return _added[name]
    if name not in _loaded:
        module = BUILTIN[BUILTIN_NAMES.index(name)] if name in BUILTIN_NAMES else None
        if module is None:
            raise KeyError(name)
        _loaded[name] = importlib.import_module(module).PLUGIN
    return _loaded[name]


def sources() -> list[Source]:
    """Every registered source, in registry order."""
    return [source(name) for name in names()]


def parser_for(name: str) -> Callable[..., ParseResult]:
    """The ``parse`` function of one source (raises KeyError for an unknown name)."""
    return source(name).parse


def register(plugin: Source) -> None:
    """Add a source of one's own; its name must be new."""
    if plugin.name in names():
        raise ValueError(f"a source named {plugin.name!r} is registered already")
    _added[plugin.name] = plugin


def unregister(name: str) -> None:
    """Remove a source added with :func:`register`."""
    del _added[name]


@contextmanager
def registered(plugin: Source) -> Iterator[Source]:
    """``plugin`` registered for the length of the block."""
    register(plugin)
    try:
        yield plugin
    finally:
        unregister(plugin.name)
