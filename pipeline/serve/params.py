"""The MCP tools' search parameters: one ``Annotated`` type per argument, its description and
its JSON-schema bounds (``maxLength``, ``enum``, ``minimum`` …) in one place.

:func:`pipeline.serve.server.build_server` annotates the search tools' arguments with these
types; the service checks every bound again with an exact message, so the schema is advice
to a client and never the only check. Like :mod:`pipeline.serve.server`, this module does not
use postponed annotations: the SDK reads the types when the tools are defined.
"""

from typing import Annotated, Any

from pydantic import Field

from pipeline.serve.cursor import MAX_CURSOR_CHARS
from pipeline.serve.service import DRUG_LABELS, LITERATURE, MAX_RESULTS, TRIALS
from pipeline.snapshot.designs import DESIGNS
from pipeline.snapshot.facets import MAX_TERM_CHARS, PHASES, YES_NO
from pipeline.snapshot.filters import INCLUSIONS, MAX_STATUSES, TRIAL_STATUSES
from pipeline.snapshot.search import MAX_QUERY_CHARS

STATUS_PATTERN = r"^[A-Za-z][A-Za-z_ -]*$"
"""What ``parse_statuses`` can read as a status (it upper-cases and maps spaces, dashes to _)."""
MAX_STATUS_CHARS = 40


def schema(**bounds: Any) -> dict[str, Any]:
    return {"json_schema_extra": bounds}


Query = Annotated[
    str,
    Field(
        description=f"Words to look for (BM25 ranking; at most {MAX_QUERY_CHARS} characters).",
        **schema(minLength=1, maxLength=MAX_QUERY_CHARS),
    ),
]
Limit = Annotated[
    int,
    Field(
        description=f"How many passages (1-{MAX_RESULTS}).",
        **schema(minimum=1, maximum=MAX_RESULTS),
    ),
]


def _sources(allowed: tuple[str, ...]) -> Any:
    return Field(
        description=f"Only these sources (default: all of {', '.join(allowed)}; a repeated "
        "one counts once).",
        **schema(items={"type": "string", "enum": list(allowed)}, maxItems=len(allowed)),
    )


LiteratureSources = Annotated[list[str], _sources(LITERATURE)]
TrialSources = Annotated[list[str], _sources(TRIALS)]
LabelSources = Annotated[list[str], _sources(DRUG_LABELS)]


def _flag(what: str) -> Any:
    return Field(
        description=f"include (default: {what} are kept, and every result carries its flags), "
        f"exclude (only records known not to be {what}: unknown ones are left out and "
        f"counted in excluded_unknown) or only (only {what}).",
        **schema(enum=list(INCLUSIONS)),
    )


def _date(end: bool) -> Any:
    side = "on or before" if end else "on or after"
    example = "2021-06 = to 2021-06-30" if end else "2021 = from 2021-01-01"
    return Field(
        description=f"Only records published {side} this date: YYYY, YYYY-MM or YYYY-MM-DD "
        f"({example}). A record whose date is unknown or too coarse to decide is left out and "
        "counted in excluded_unknown.",
        **schema(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$", maxLength=10),
    )


Preprint = Annotated[str, _flag("preprints")]
Retracted = Annotated[str, _flag("retracted records")]
Concern = Annotated[str, _flag("records with an expression of concern")]
DateFrom = Annotated[str | None, _date(end=False)]
DateTo = Annotated[str | None, _date(end=True)]
Statuses = Annotated[
    list[str],
    Field(
        description="Only trials with these ClinicalTrials.gov overall statuses: "
        f"{', '.join(TRIAL_STATUSES)} or another status the snapshot holds (any case; a space "
        "or dash stands for _; a repeated one counts once); a trial without a status is left "
        "out and counted.",
        **schema(
            items={"type": "string", "pattern": STATUS_PATTERN, "maxLength": MAX_STATUS_CHARS},
            maxItems=MAX_STATUSES,
        ),
    ),
]
Designs = Annotated[
    list[str],
    Field(
        description="Only records of these study designs (any of them), from their "
        "publication types (PubMed/MEDLINE, Europe PMC, JATS, Crossref): rct is narrower than "
        "clinical-trial, systematic-review than review, cohort and case-control than "
        "observational. A record whose types do not tell (none, only 'Journal Article', or a "
        "broader design) is left out and counted in excluded_unknown.",
        **schema(items={"type": "string", "enum": list(DESIGNS)}, maxItems=len(DESIGNS)),
    ),
]
OpenAccess = Annotated[
    str,
    Field(
        description="include (default), exclude (only records known not to be open access) "
        "or only (only open-access records: Europe PMC's isOpenAccess, or an open licence "
        "the snapshot knows). Unknown ones are left out and counted in excluded_unknown.",
        **schema(enum=list(INCLUSIONS)),
    ),
]
Phases = Annotated[
    list[str],
    Field(
        description="Only trials of these ClinicalTrials.gov phases (any of them); a trial "
        "without phases is left out and counted, unless it is observational (no phase).",
        **schema(items={"type": "string", "enum": list(PHASES)}, maxItems=len(PHASES)),
    ),
]
HasResults = Annotated[
    str | None,
    Field(
        description="yes: only trials with posted results; no: only trials without. A trial "
        "that does not say is left out and counted.",
        **schema(enum=[*YES_NO, None]),
    ),
]


def _term(what: str) -> Any:
    return Field(
        description=f"Only {what} (case and accents folded); a record without that field is "
        "left out and counted in excluded_unknown.",
        **schema(minLength=1, maxLength=MAX_TERM_CHARS),
    )


Condition = Annotated[
    str | None, _term("trials whose conditions field holds these words, as whole words")
]
Intervention = Annotated[
    str | None,
    _term(
        "trials whose interventions field (type, name, other names, description) holds "
        "these words, as whole words"
    ),
]
Drug = Annotated[
    str | None,
    _term("labels naming exactly this drug as a brand, generic or substance name"),
]


def _trial_date(what: str, end: bool) -> Any:
    side = "on or before" if end else "on or after"
    return Field(
        description=f"Only trials whose {what} date (actual or anticipated) is {side} this "
        "date: YYYY, YYYY-MM or YYYY-MM-DD. A trial whose date is unknown or too coarse to "
        "decide is left out and counted in excluded_unknown.",
        **schema(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$", maxLength=10),
    )


StartedFrom = Annotated[str | None, _trial_date("start", end=False)]
StartedTo = Annotated[str | None, _trial_date("start", end=True)]
CompletedFrom = Annotated[str | None, _trial_date("completion", end=False)]
CompletedTo = Annotated[str | None, _trial_date("completion", end=True)]
LabelQuery = Annotated[
    str | None,
    Field(
        description=f"Words to look for (BM25 ranking; at most {MAX_QUERY_CHARS} characters). "
        "May be left out when drug is given: then every label of that drug, newest first.",
        **schema(minLength=1, maxLength=MAX_QUERY_CHARS),
    ),
]
Cursor = Annotated[
    str | None,
    Field(
        description="next_cursor of the previous page; pass it with the same query and "
        "filters. It stays valid while this server serves this snapshot.",
        **schema(maxLength=MAX_CURSOR_CHARS),
    ),
]
