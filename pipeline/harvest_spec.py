"""Corpus specs: ``snapshots/<name>.toml``, what one snapshot build harvests.

A spec names the corpus and has one table per source it harvests: ``[pubmed]``,
``[crossref]`` … Each table is the pydantic model its source owns (the source's
``options``, :class:`pipeline.sources.base.Source`), so the tables are what the registry
says: a source registered with :func:`pipeline.sources.register` gets its table too
(:func:`spec_model`). The spec is validated by pydantic; every error names the file, the
line and the key, e.g. ``snapshots/x.toml:7: [pubmed].queries[0].limit: Input should be a
valid integer, got 'ten'``. Unknown keys are rejected, so a typo never silently harvests less.

The spec hash (:meth:`CorpusSpec.spec_hash`) is the sha256 of the canonical JSON of what is
harvested: it leaves out ``description`` and ``replay``, which change nothing upstream.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, create_model

from pipeline.errors import SpecError
from pipeline.sources import names, source
from pipeline.sources.arxiv import ArxivSpec
from pipeline.sources.clinicaltrials import ClinicalTrialsQuery, ClinicalTrialsSpec
from pipeline.sources.crossref import CrossrefSpec
from pipeline.sources.europepmc import EuropePmcQuery, EuropePmcSpec
from pipeline.sources.local import SPEC_DIR, LocalSpec
from pipeline.sources.openalex import OpenAlexSpec
from pipeline.sources.openfda import OpenFdaQuery, OpenFdaSpec
from pipeline.sources.pubmed import PubMedQuery, PubMedSpec
from pipeline.sources.spec_types import (
    DOI,
    MAX_LIMIT,
    NCT,
    PMCID,
    PMID,
    PPR,
    SET_ID,
    Strict,
)

__all__ = [
    "DOI",
    "MAX_LIMIT",
    "NCT",
    "PMCID",
    "PMID",
    "PPR",
    "SET_ID",
    "ClinicalTrialsQuery",
    "ClinicalTrialsSpec",
    "CorpusSpec",
    "CrossrefSpec",
    "EuropePmcQuery",
    "EuropePmcSpec",
    "OpenFdaQuery",
    "OpenFdaSpec",
    "PubMedQuery",
    "PubMedSpec",
    "format_loc",
    "load_spec",
    "locate_key",
    "parse_spec",
    "spec_model",
]

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def _name(value: object) -> object:
    if isinstance(value, str) and not NAME.match(value):
        raise ValueError(
            "expected lower-case letters, digits, '-' or '_' (at most 64, starting with a "
            f"letter or digit), got {value!r}"
        )
    return value


class CorpusSpec(Strict):
    """One corpus: what to harvest from each source (a missing section = not harvested)."""

    name: Annotated[str, BeforeValidator(_name)]
    description: str = ""
    replay: list[str] = Field(default_factory=list)  # default replay folders, spec-relative
    pubmed: PubMedSpec | None = None
    europepmc: EuropePmcSpec | None = None
    crossref: CrossrefSpec | None = None
    clinicaltrials: ClinicalTrialsSpec | None = None
    openfda: OpenFdaSpec | None = None
    arxiv: ArxivSpec | None = None  # arXiv and OpenAlex: what citeseal check --online asks
    openalex: OpenAlexSpec | None = None
    local: LocalSpec | None = None

    def harvested(self) -> dict[str, Any]:
        """The part of the spec that decides what is harvested (canonical form)."""
        return self.model_dump(mode="json", exclude={"description", "replay"}, exclude_none=True)

    def spec_hash(self) -> str:
        """sha256 of the canonical JSON of :meth:`harvested`."""
        canonical = json.dumps(
            self.harvested(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def options(self, name: str) -> BaseModel | None:
        """The table of source ``name`` (None: the spec has none)."""
        value = getattr(self, name, None)
        return value if isinstance(value, BaseModel) else None

    def sources(self) -> list[str]:
        """The sources this spec harvests, in registry order: those with a table, and those
        it asks to enrich (PubTator3 by ``[pubmed] annotations``, Crossref by its update
        notices or by ``dois``): each source's ``in_spec``."""
        return [name for name in names() if source(name).in_spec(self)]


_MODELS: dict[tuple[str, ...], type[CorpusSpec]] = {}


def spec_model() -> type[CorpusSpec]:
    """:class:`CorpusSpec` with a table for every registered source that has options and
    no field of its own (a source one registered: docs/sources.md)."""
    extra = tuple(n for n in names() if n not in CorpusSpec.model_fields)
    if extra not in _MODELS:
        fields: dict[str, Any] = {}
        for name in extra:
            options = source(name).options
            if options is not None:
                fields[name] = (options | None, None)
        _MODELS[extra] = (
            create_model("CorpusSpec", __base__=CorpusSpec, **fields) if fields else CorpusSpec
        )
    return _MODELS[extra]


# -- loading -----------------------------------------------------------------------------------


def load_spec(path: Path) -> CorpusSpec:
    """Read and validate a spec file; raise :class:`SpecError` naming the line and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"corpus spec {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"cannot read corpus spec {path}: {error}") from None
    return parse_spec(text, path)


def parse_spec(text: str, path: Path) -> CorpusSpec:
    """Validate the TOML ``text`` of the spec at ``path`` (the path is only for messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line, reason = _toml_error(str(error))
        raise SpecError(f"{path}:{line}: invalid TOML: {reason}") from None
    try:
        # the spec's folder: where a [local] folder is (nothing of it is stored)
        return spec_model().model_validate(data, context={SPEC_DIR: path.parent})
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(first["loc"])
        line = locate_key(text, loc)
        where = f"{path}:{line}" if line else str(path)
        raise SpecError(f"{where}: {format_loc(loc)}: {_message(first, loc)}") from None


_TOML_AT = re.compile(r"^(.*?)\s*\(at line (\d+), column \d+\)$", re.S)


def _toml_error(message: str) -> tuple[int, str]:
    match = _TOML_AT.match(message)
    if match is None:
        return 1, message
    return int(match.group(2)), match.group(1)


_GOT_TYPES = frozenset(
    {
        "int_parsing",
        "int_type",
        "int_from_float",
        "bool_parsing",
        "bool_type",
        "string_type",
        "list_type",
        "dict_type",
        "model_type",
        "model_attributes_type",
        "greater_than_equal",
        "less_than_equal",
        "string_too_short",
    }
)


def _fields_of(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = spec_model()
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return []
        inner = _model_in(field.annotation)
        if inner is None:
            return []
        model = inner
    return sorted(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _message(error: Any, loc: tuple[Any, ...]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        fields = _fields_of(loc)
        if len(loc) == 1 and isinstance(error.get("input"), dict):
            expected = ", ".join(f for f in fields if f not in _TOP_KEYS)
            return f"unknown section; expected one of {expected}"
        return f"unknown key; expected one of {', '.join(fields)}"
    if kind == "missing":
        return "required key is missing"
    message: str = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if kind in _GOT_TYPES:
        message = f"{message.split(',')[0]}, got {error['input']!r}"
    return message


_TOP_KEYS = frozenset({"name", "description", "replay"})


def format_loc(loc: tuple[Any, ...]) -> str:
    """``('pubmed', 'queries', 0, 'limit')`` → ``[pubmed].queries[0].limit``."""
    if not loc:
        return "(spec)"
    head, *rest = loc
    text = str(head) if head in _TOP_KEYS else f"[{head}]"
    for part in rest:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


# -- finding the line of a key -------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def locate_key(text: str, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of ``loc`` in the TOML ``text`` (best effort), or None.

    Scans the text: table headers (``[pubmed]``, ``[[pubmed.queries]]``) narrow the search to
    their lines; inside them the keys are found in order, an index ``[i]`` skipping to the
    ``i``-th inline table (``{``) or array item after the key before it.
    """
    if not loc:
        return None
    lines = text.splitlines()
    headers = [(i, m) for i, line in enumerate(lines) if (m := _HEADER.match(line))]

    def block(index: int) -> tuple[int, int]:
        following = [i for i, _ in headers if i > index]
        return index, following[0] if following else len(lines)

    head, parts = str(loc[0]), list(loc)
    if len(parts) >= 3 and isinstance(parts[2], int):
        name = f"{head}.{parts[1]}"
        tables = [i for i, m in headers if m.group(1) == "[[" and m.group(2) == name]
        if len(tables) > parts[2]:
            start, end = block(tables[parts[2]])
            return _scan(lines, start, end, parts[3:]) if parts[3:] else start + 1
    tables = [i for i, m in headers if m.group(1) == "[" and m.group(2) == head]
    if tables:
        start, end = block(tables[0])
        return _scan(lines, start, end, parts[1:]) if parts[1:] else start + 1
    # a top-level key: before the first header
    return _scan(lines, 0, headers[0][0] if headers else len(lines), parts)


def _scan(lines: list[str], start: int, end: int, parts: list[Any]) -> int | None:
    body = "\n".join(lines[start:end])
    offset = 0
    found_at: int | None = None
    for index, part in enumerate(parts):
        if isinstance(part, int):
            nested = index + 1 < len(parts) and not isinstance(parts[index + 1], int)
            marker = "{" if nested else ","
            skips = part + 1 if nested else part
            position = offset
            for _ in range(skips):
                position = body.find(marker, position)
                if position < 0:
                    break
                position += 1
            if position < 0:
                break
            offset = position
            found_at = offset
            continue
        match = re.compile(rf"(^|[\s{{,]){re.escape(str(part))}\s*=", re.M).search(body, offset)
        if match is None:
            break
        offset = match.end()
        found_at = match.start(0) + len(match.group(1))
    if found_at is None:
        return start + 1 if start else None
    return start + body.count("\n", 0, found_at) + 1
