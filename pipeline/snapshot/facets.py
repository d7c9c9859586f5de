"""The per-source filters of issue 21: open access, trial phase, posted results, trial
conditions and interventions, drug names. Each is a parser with exact errors and one SQL
``CASE`` giving 1 (admit), 0 (reject) or NULL (undecided), as :mod:`pipeline.snapshot.filters`
requires; values are bound parameters, never SQL text.

=====================  =============================================================================
``open_access``        open: Europe PMC says ``isOpenAccess`` Y, or the record's licence is one the
                       snapshot knows to be open (``CC0-1.0``, ``public-domain``, any ``CC-BY…``).
                       Not open: Europe PMC says ``isOpenAccess`` N and no open licence is known.
                       Else unknown. A PMCID alone decides nothing (PMC also holds free-to-read,
                       unlicensed and embargoed articles), nor does ``other:<url>``
``phases``             trials whose ClinicalTrials.gov ``phases`` hold one of these; a trial without
                       phases is rejected when it is an observational study (they have no phase),
                       else undecided; other sources are rejected
``has_results``        trials whose ``hasResults`` is true (``yes``) or false (``no``); a trial
                       without the field is undecided; other sources are rejected
``condition``,         trials whose conditions field (the ``trial.conditions.N`` passages: the
``intervention``       registry's condition list) or interventions field (``trial.interventions.N``:
                       each intervention's type, name, other names and description) holds the text
                       as whole words, case- and accent-folded (``farrow syndrome`` matches
                       ``Farrow Syndrome, Type 2``; a condition's words never run on into the next);
                       a trial without that field is undecided; other sources are rejected
``drug``               openFDA labels naming the drug exactly (case-, accent- and space-folded) as a
                       brand, generic or substance name (openFDA's harmonised ``brand_name``,
                       ``generic_name``, ``substance_name``); a label without any of the three is
                       undecided; other sources are rejected
=====================  =============================================================================

The SQL reads the hit's facts (``source``, ``metadata``, ``licence``) and, for conditions and
interventions, the passages of the hit's record version through the alias ``h`` (the relation
the states are computed over).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Literal, get_args

from audit.errors import InputError

YesNo = Literal["yes", "no"]
YES_NO: tuple[str, ...] = get_args(YesNo)

PHASES = ("EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA")
"""ClinicalTrials.gov API v2 ``designModule.phases`` values."""
MAX_PHASES = len(PHASES)
MAX_TERM_CHARS = 200
"""The longest condition, intervention or drug name a filter takes."""

OPEN_LICENCE_PATTERN = r"CC0-1\.0|public-domain|CC-BY(-[A-Z]+)*(-\d+(\.\d+)?)?"
"""The licences (audit.licences' vocabulary) that make a record open access."""


def parse_yes_no(name: str, value: str) -> YesNo:
    """``yes`` | ``no`` (case-insensitive)."""
    folded = value.strip().lower()
    for choice in get_args(YesNo):
        if folded == choice:
            return choice
    raise InputError(f"{name} must be one of {', '.join(YES_NO)}, got {value!r}")


_ROMAN = {"I": "1", "II": "2", "III": "3", "IV": "4"}


def parse_phases(name: str, values: Iterable[str]) -> tuple[str, ...]:
    """Trial phases as ClinicalTrials.gov writes them, forgiving case, spaces, dashes and
    underscores, a bare or Roman number (``phase 2``, ``Phase-2``, ``2``, ``Phase III``,
    ``early phase 1``, ``N/A``); duplicates dropped."""
    chosen: list[str] = []
    for value in values:
        squeezed = re.sub(r"[\s_/-]+", "", value.strip().upper())
        number = re.fullmatch(r"(EARLY)?(?:PHASE)?([1-4]|I{1,3}|IV)", squeezed)
        if number:
            early, digit = number.groups()
            squeezed = f"{early or ''}PHASE{_ROMAN.get(digit, digit)}"
        phase = squeezed.replace("EARLYPHASE", "EARLY_PHASE")
        if phase not in PHASES:
            raise InputError(
                f"{name}: unknown trial phase {value!r}; expected one of {', '.join(PHASES)}"
            )
        chosen.append(phase)
    if len(chosen) > MAX_PHASES:
        raise InputError(f"{name}: at most {MAX_PHASES} trial phases, got {len(chosen)}")
    return tuple(dict.fromkeys(chosen))


def _words(text: str) -> str:
    """``text`` as the SQL folds it, approximately (accents stripped, lower-cased, runs of
    other characters as one space): only to tell whether anything is left to match."""
    stripped = "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
    )
    return " ".join(re.split(r"[^a-z0-9]+", stripped.lower())).strip()


def parse_term(name: str, value: str | None) -> str | None:
    """A condition, intervention or drug name: None when not given; at most
    :data:`MAX_TERM_CHARS` characters, with a letter or digit to match."""
    if value is None:
        return None
    text = " ".join(value.split())
    if len(text) > MAX_TERM_CHARS:
        raise InputError(f"{name} is {len(text)} characters; at most {MAX_TERM_CHARS}")
    if not _words(text):
        raise InputError(f"{name} has no letter or digit to match: got {value!r}")
    return text


def open_access_state(mode: str) -> str:
    """``only`` admits open records, ``exclude`` the records known not to be open."""
    said = "json_extract_string(metadata, '$.open_access')"
    is_open = f"({said} = 'true' OR regexp_full_match(licence, '{OPEN_LICENCE_PATTERN}'))"
    if_open, if_closed = ("1", "0") if mode == "only" else ("0", "1")
    return f"CASE WHEN {is_open} THEN {if_open} WHEN {said} = 'false' THEN {if_closed} END"


PHASES_SQL = (
    "CASE WHEN source <> 'clinicaltrials' THEN 0 "
    "WHEN len(json_extract_string(metadata, '$.phases[*]')) > 0 THEN "
    "CASE WHEN list_has_any(json_extract_string(metadata, '$.phases[*]'), "
    "string_split($phases, $sep)) THEN 1 ELSE 0 END "
    "WHEN json_extract_string(metadata, '$.study_type') = 'OBSERVATIONAL' THEN 0 END"
)
HAS_RESULTS_SQL = (
    "CASE WHEN source <> 'clinicaltrials' THEN 0 "
    "WHEN json_extract_string(metadata, '$.has_results') IS NULL THEN NULL "
    "WHEN json_extract_string(metadata, '$.has_results') = $has_results THEN 1 ELSE 0 END"
)
_FIELD_WORDS = (
    "' ' || regexp_replace(regexp_replace(lower(strip_accents({x})), ';', ' ; ', 'g'), "
    "'[^a-z0-9;]+', ' ', 'g') || ' '"
)
_TERM_WORDS = (
    "' ' || trim(regexp_replace(lower(strip_accents({x})), '[^a-z0-9]+', ' ', 'g')) || ' '"
)
TRIAL_FIELDS = {"condition": "trial.conditions.", "intervention": "trial.interventions."}
"""The passages that hold each fielded trial filter's field (pipeline.sources.clinicaltrials)."""


def trial_field_state(name: str) -> str:
    """Trials whose field (:data:`TRIAL_FIELDS`) holds ``$<name>`` as whole words."""
    of_hit = (
        "SELECT 1 FROM passages q WHERE q.record_id = h.record_id AND q.version = h.version "  # noqa: S608
        f"AND starts_with(q.path, '{TRIAL_FIELDS[name]}')"
    )
    holds = f"contains({_FIELD_WORDS.format(x='q.text')}, {_TERM_WORDS.format(x='$' + name)})"
    return (
        "CASE WHEN source <> 'clinicaltrials' THEN 0 "
        f"WHEN NOT EXISTS ({of_hit}) THEN NULL "
        f"WHEN EXISTS ({of_hit} AND {holds}) THEN 1 ELSE 0 END"
    )


DRUG_FIELDS = ("brand_name", "generic_name", "substance_name")
_FOLD_NAME = "trim(regexp_replace(lower(strip_accents({x})), '\\s+', ' ', 'g'))"
_NAMES = "list_concat({})".format(
    ", ".join(f"coalesce(json_extract_string(metadata, '$.{f}[*]'), [])" for f in DRUG_FIELDS)
)
DRUG_SQL = (
    "CASE WHEN source <> 'openfda' THEN 0 "
    f"WHEN len({_NAMES}) = 0 THEN NULL "
    f"WHEN list_contains(list_transform({_NAMES}, lambda x: {_FOLD_NAME.format(x='x')}), "
    f"{_FOLD_NAME.format(x='$drug')}) THEN 1 ELSE 0 END"
)
"""Labels naming ``$drug`` (module docstring)."""
