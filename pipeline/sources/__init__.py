"""The six sources. Each module exposes a pure ``parse(body, *, url=None) -> ParseResult``
and harvest functions that use :class:`pipeline.http.HttpClient`.

:data:`PARSERS` maps a source name to its module; modules are imported lazily so a broken
optional dependency of one source never stops another.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pydantic models load with the parsers, not with the CLI
    from pipeline.records import ParseResult

MODULES: dict[str, str] = {
    "pubmed": "pipeline.sources.pubmed",
    "europepmc": "pipeline.sources.europepmc",
    "pubtator3": "pipeline.sources.pubtator3",
    "crossref": "pipeline.sources.crossref",
    "clinicaltrials": "pipeline.sources.clinicaltrials",
    "openfda": "pipeline.sources.openfda",
}


class Parser(Protocol):
    def __call__(self, body: str | bytes, *, url: str | None = None) -> ParseResult: ...


def parser_for(source: str) -> Callable[..., ParseResult]:
    """The ``parse`` function of one source (raises KeyError for an unknown name)."""
    module = importlib.import_module(MODULES[source])
    return module.parse
