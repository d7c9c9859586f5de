"""The building blocks of a source's corpus-spec table (``[pubmed]``, ``[crossref]`` …).

Each source owns the pydantic model of its table (its ``options`` in
:class:`pipeline.sources.base.Source`) and builds it from these: :class:`Strict` (unknown keys
rejected, frozen), :class:`Window` (``mindate``/``maxdate``), :data:`Limit`, and
:func:`id_list` (a list of identifiers, each checked against its grammar). The identifier
grammars of the specs are here too, so a source and the spec agree on them.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

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


DateText = Annotated[str | None, BeforeValidator(_date_text)]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, strict=True)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Window(Strict):
    mindate: DateText = None
    maxdate: DateText = None

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.mindate and self.maxdate and self.mindate > self.maxdate:
            raise ValueError(f"mindate {self.mindate} is after maxdate {self.maxdate}")
        return self


def relative_folder(value: str) -> str:
    """``value`` when it names a folder relative to the spec file, else ValueError: an
    absolute path (or ``~``) would be stored in every snapshot with the spec."""
    if Path(value).is_absolute() or PurePosixPath(value).is_absolute() or value[0] == "~":
        raise ValueError(
            "expected a folder relative to the spec file (an absolute path would be "
            f"stored in every snapshot), got {value!r}"
        )
    return value


def id_list(pattern: re.Pattern[str], what: str) -> BeforeValidator:
    """A list validator: every string in it must match ``pattern`` (``what`` names it)."""

    def check(values: object) -> object:
        if isinstance(values, list):
            for value in values:
                if isinstance(value, str) and not pattern.match(value):
                    raise ValueError(f"{value!r} is not {what}")
        return values

    return BeforeValidator(check)


def lower(values: object) -> object:
    """DOIs are case-insensitive: compared (and harvested) in lower case, as records hold them."""
    if isinstance(values, list):
        return [v.lower() if isinstance(v, str) else v for v in values]
    return values


def full_date(text: str, month: str, day: str) -> str:
    """``2020`` → ``2020-{month}-{day}``, ``2020-02`` → ``2020-02-{day}`` (28 for February's
    last day), a full date as it is."""
    parts = text.split("-")
    if len(parts) == 1:
        return f"{parts[0]}-{month}-{day}"
    if len(parts) == 2:
        return f"{parts[0]}-{parts[1]}-{'28' if day == '31' and parts[1] == '02' else day}"
    return text
