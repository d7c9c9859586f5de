"""Corpus specs: ``snapshots/<name>.toml``, what one snapshot build harvests.

A spec names the corpus and, per source, queries (each with a limit), explicit id lists,
date windows and options. It is validated by pydantic; every error names the file, the line
and the key, e.g. ``snapshots/x.toml:7: [pubmed].queries[0].limit: Input should be a valid
integer, got 'ten'``. Unknown keys are rejected, so a typo never silently harvests less.

The spec hash (:meth:`CorpusSpec.spec_hash`) is the sha256 of the canonical JSON of what is
harvested: it leaves out ``description`` and ``replay``, which change nothing upstream.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from datetime import date
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    model_validator,
)

from pipeline.errors import SpecError

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
PMID = re.compile(r"^[1-9][0-9]{0,9}$")
NCT = re.compile(r"^NCT[0-9]{8}$")
PPR = re.compile(r"^PPR[1-9][0-9]{0,9}$")
PMCID = re.compile(r"^PMC[1-9][0-9]{0,9}$")
# 10.<registrant>[.<sub>…]/<suffix>: printable ASCII without blanks, and without ',' (the
# separator of Crossref's filter list, which would turn one DOI into two)
DOI = re.compile(r"^10\.[0-9]{4,9}(\.[0-9]+)*/[!-+\--~]+$")
SET_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_DATE = re.compile(r"^([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?$")
MAX_LIMIT = 1_000_000


def _date_text(value: object) -> object:
    """TOML dates (``mindate = 2020-01-01``) and strings both become ``YYYY[-MM[-DD]]``."""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        match = _DATE.match(value)
        year, month, day = match.groups() if match else ("", None, None)
        try:
            date(int(year or "x"), int(month or 1), int(day or 1))
        except ValueError:
            raise ValueError(
                f"expected a date YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}"
            ) from None
    return value


def _name(value: object) -> object:
    if isinstance(value, str) and not NAME.match(value):
        raise ValueError(
            "expected lower-case letters, digits, '-' or '_' (at most 64, starting with a "
            f"letter or digit), got {value!r}"
        )
    return value


DateText = Annotated[str | None, BeforeValidator(_date_text)]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, strict=True)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Window(_Strict):
    mindate: DateText = None
    maxdate: DateText = None

    @model_validator(mode="after")
    def _ordered(self) -> _Window:
        if self.mindate and self.maxdate and self.mindate > self.maxdate:
            raise ValueError(f"mindate {self.mindate} is after maxdate {self.maxdate}")
        return self


def _ids(pattern: re.Pattern[str], what: str) -> BeforeValidator:
    def check(values: object) -> object:
        if isinstance(values, list):
            for value in values:
                if isinstance(value, str) and not pattern.match(value):
                    raise ValueError(f"{value!r} is not {what}")
        return values

    return BeforeValidator(check)


def _lower(values: object) -> object:
    """DOIs are case-insensitive: compared (and harvested) in lower case, as records hold them."""
    if isinstance(values, list):
        return [v.lower() if isinstance(v, str) else v for v in values]
    return values


class PubMedQuery(_Window):
    term: str = Field(min_length=1)
    limit: Limit


class PubMedSpec(_Strict):
    queries: list[PubMedQuery] = Field(default_factory=list)
    ids: Annotated[list[str], _ids(PMID, "a PMID (1 to 10 digits)")] = Field(default_factory=list)
    annotations: StrictBool = False  # PubTator3 annotations for every PubMed record


class EuropePmcQuery(_Window):
    query: str = Field(min_length=1)
    limit: Limit

    def effective_query(self) -> str:
        """The query with the date window as Europe PMC syntax (``FIRST_PDATE:[a TO b]``)."""
        if not (self.mindate or self.maxdate):
            return self.query
        low = _full_date(self.mindate, "01", "01") if self.mindate else "1800-01-01"
        high = _full_date(self.maxdate, "12", "31") if self.maxdate else "3000-12-31"
        return f"({self.query}) AND FIRST_PDATE:[{low} TO {high}]"


class EuropePmcSpec(_Strict):
    queries: list[EuropePmcQuery] = Field(default_factory=list)
    ids: Annotated[list[str], _ids(PPR, "a Europe PMC preprint id (PPR…)")] = Field(
        default_factory=list
    )
    pmcids: Annotated[list[str], _ids(PMCID, "a PMCID (PMC + 1 to 10 digits)")] = Field(
        default_factory=list
    )
    full_text: StrictBool = False  # fullTextXML for every open-access PMCID met in the corpus


class CrossrefSpec(_Strict):
    updates: StrictBool = False  # update notices (retraction, EoC, correction) for every DOI
    dois: Annotated[
        list[str],
        _ids(DOI, "a DOI (10.NNNN/suffix, printable ASCII without blanks or ',')"),
        BeforeValidator(_lower),
    ] = Field(default_factory=list)


class ClinicalTrialsQuery(_Strict):
    term: str | None = None
    cond: str | None = None
    intr: str | None = None
    filters: dict[str, str] = Field(default_factory=dict)
    limit: Limit

    @model_validator(mode="after")
    def _something(self) -> ClinicalTrialsQuery:
        if not (self.term or self.cond or self.intr or self.filters):
            raise ValueError("a query needs at least one of term, cond, intr or filters")
        return self


class ClinicalTrialsSpec(_Strict):
    queries: list[ClinicalTrialsQuery] = Field(default_factory=list)
    ids: Annotated[list[str], _ids(NCT, "an NCT id (NCT + 8 digits)")] = Field(default_factory=list)


class OpenFdaQuery(_Strict):
    search: str = Field(min_length=1)
    limit: Limit


class OpenFdaSpec(_Strict):
    queries: list[OpenFdaQuery] = Field(default_factory=list)
    set_ids: Annotated[list[str], _ids(SET_ID, "a lower-case set id UUID")] = Field(
        default_factory=list
    )


class CorpusSpec(_Strict):
    """One corpus: what to harvest from each source (a missing section = not harvested)."""

    name: Annotated[str, BeforeValidator(_name)]
    description: str = ""
    replay: list[str] = Field(default_factory=list)  # default replay folders, spec-relative
    pubmed: PubMedSpec | None = None
    europepmc: EuropePmcSpec | None = None
    crossref: CrossrefSpec | None = None
    clinicaltrials: ClinicalTrialsSpec | None = None
    openfda: OpenFdaSpec | None = None

    def harvested(self) -> dict[str, Any]:
        """The part of the spec that decides what is harvested (canonical form)."""
        return self.model_dump(mode="json", exclude={"description", "replay"}, exclude_none=True)

    def spec_hash(self) -> str:
        """sha256 of the canonical JSON of :meth:`harvested`."""
        canonical = json.dumps(
            self.harvested(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def sources(self) -> list[str]:
        """The sources this spec harvests, PubTator3 and Crossref included when enabled
        (Crossref by its update notices or by ``dois``)."""
        out: list[str] = []
        if self.pubmed is not None:
            out.append("pubmed")
        if self.europepmc is not None:
            out.append("europepmc")
        if self.pubmed is not None and self.pubmed.annotations:
            out.append("pubtator3")
        if self.crossref is not None and (self.crossref.updates or self.crossref.dois):
            out.append("crossref")
        if self.clinicaltrials is not None:
            out.append("clinicaltrials")
        if self.openfda is not None:
            out.append("openfda")
        return out


def _full_date(text: str, month: str, day: str) -> str:
    parts = text.split("-")
    if len(parts) == 1:
        return f"{parts[0]}-{month}-{day}"
    if len(parts) == 2:
        return f"{parts[0]}-{parts[1]}-{'28' if day == '31' and parts[1] == '02' else day}"
    return text


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
        return CorpusSpec.model_validate(data)
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
    model: type[BaseModel] = CorpusSpec
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
