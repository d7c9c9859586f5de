"""Turn ClinicalTrials.gov v2 study fields into citable text (pure helpers for
:mod:`pipeline.sources.clinicaltrials`).

The v2 API delivers rich text as CommonMark. We keep the words exactly and drop only the
backslash escapes (``\\>40%`` → ``>40%``), so a quote copied from the website matches. Posted
results are tables upstream; :func:`render_outcome_measure` writes each outcome measure as a
few plain sentences ("Participants analysed: A 1218; B 1183. …") so it can be cited and quoted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.segment import normalize_space

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_TERMINAL = (".", "!", "?", ":", ";")
_ELIGIBILITY_HEADER = re.compile(
    r"^\s*[#*_]*\s*(inclusion|exclusion)\s+criteria\b\s*[*_]*\s*:?\s*[*_]*\s*", re.IGNORECASE
)
_LIST_ITEM = re.compile(r"^( {0,2})(?:\d{1,3}[.)]|[*\-+•])\s+")

JsonDict = Mapping[str, Any]


def unescape(text: str) -> str:
    """CommonMark backslash escapes removed (``\\[`` → ``[``); nothing else changes."""
    return _ESCAPE.sub(r"\1", text)


def clean(text: object) -> str:
    """Upstream rich text as one whitespace-normalised line without Markdown escapes."""
    return normalize_space(unescape(text)) if isinstance(text, str) else ""


def sentence(text: str) -> str:
    """``text`` ending with terminal punctuation (a full stop is added when it has none)."""
    text = text.strip()
    return text if not text or text.endswith(_TERMINAL) else f"{text}."


def sentences(parts: Sequence[str]) -> str:
    """Non-empty parts joined as sentences."""
    return " ".join(sentence(p) for p in parts if p.strip())


def label(code: object) -> str:
    """``PLACEBO_COMPARATOR`` → ``Placebo comparator``."""
    if not isinstance(code, str) or not code:
        return ""
    words = code.replace("_", " ").strip()
    return words[:1].upper() + words[1:].lower()


def as_dict(value: object) -> JsonDict:
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def strings(value: object) -> list[str]:
    return [clean(v) for v in as_list(value) if clean(v)]


# -- eligibility ---------------------------------------------------------------------------


def split_eligibility(text: str) -> dict[str, list[str]]:
    """Eligibility free text split into ``inclusion``, ``exclusion`` and ``general`` items.

    A line "Inclusion Criteria" / "Exclusion Criteria" (any case, optional colon or Markdown
    emphasis) starts a part; text before any header, or criteria without headers, is
    ``general``. Within a part, each top-level list item (``1.``, ``*``, ``-``, ``•`` indented
    at most two spaces) is one item with its nested sub-items; text outside lists is split
    into paragraphs. The list marker of a top-level item is dropped, nested markers are kept.
    """
    parts: dict[str, list[str]] = {"general": [], "inclusion": [], "exclusion": []}
    part = "general"
    current: list[str] = []
    blank_before = False

    def flush() -> None:
        if current:
            item = clean(" ".join(current))
            if item:
                parts[part].append(item)
            current.clear()

    for line in text.splitlines():
        if not line.strip():
            blank_before = True
            continue
        header = _ELIGIBILITY_HEADER.match(line)
        if header:
            flush()
            part = header.group(1).lower()
            rest = line[header.end() :].strip()
            if rest:
                current.append(rest)
            blank_before = False
            continue
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            current.append(line[item.end() :])
        elif blank_before and not line.startswith(" ") and not line.startswith("\t"):
            flush()  # an unindented paragraph after a blank line
            current.append(line)
        else:
            current.append(line)  # continuation or nested sub-item
        blank_before = False
    flush()
    return parts


# -- arms, interventions, outcomes ------------------------------------------------------------


def render_intervention(item: JsonDict) -> str:
    """``Drug: Zentravir (other names: ZTV-1). 200 mg orally once daily.``"""
    name = clean(item.get("name"))
    kind = label(item.get("type"))
    head = f"{kind}: {name}" if kind and name else name or kind
    other = strings(item.get("otherNames"))
    if other:
        head += f" (other names: {', '.join(other)})"
    return sentences([head, clean(item.get("description"))])


def render_arm(arm: JsonDict) -> str:
    """``Zentravir (Experimental): description. Interventions: Drug: Zentravir.``"""
    name = clean(arm.get("label"))
    kind = label(arm.get("type"))
    head = f"{name} ({kind})" if name and kind else name or kind
    interventions = strings(arm.get("interventionNames"))
    tail = f"Interventions: {'; '.join(interventions)}" if interventions else ""
    description = clean(arm.get("description"))
    first = f"{head}: {description}" if head and description else head or description
    return sentences([first, tail])


def render_outcome(outcome: JsonDict) -> str:
    """A planned outcome: measure, time frame, description."""
    frame = clean(outcome.get("timeFrame"))
    return sentences(
        [
            clean(outcome.get("measure")),
            f"Time frame: {frame}" if frame else "",
            clean(outcome.get("description")),
        ]
    )


# -- posted results --------------------------------------------------------------------------

_DISPERSION = {
    "STANDARD_DEVIATION": "SD",
    "STANDARD_ERROR": "SE",
    "INTER_QUARTILE_RANGE": "IQR",
    "FULL_RANGE": "range",
    "CONFIDENCE_INTERVAL_80": "80% CI",
    "CONFIDENCE_INTERVAL_90": "90% CI",
    "CONFIDENCE_INTERVAL_95": "95% CI",
    "CONFIDENCE_INTERVAL_975": "97.5% CI",
    "CONFIDENCE_INTERVAL_99": "99% CI",
    "GEOMETRIC_COEFFICIENT": "geometric CV",
}


def _measurement(m: JsonDict, dispersion: str, unit: str) -> str:
    value = clean(m.get("value")) or "NA"
    text = f"{value} {unit}".strip() if unit else value
    spread = clean(m.get("spread"))
    lower, upper = clean(m.get("lowerLimit")), clean(m.get("upperLimit"))
    if spread:
        text += f" ({dispersion} {spread})" if dispersion else f" ({spread})"
    elif lower or upper:
        span = f"{lower or 'NA'} to {upper or 'NA'}"
        text += f" ({dispersion} {span})" if dispersion else f" ({span})"
    comment = clean(m.get("comment"))
    return f"{text} [{comment}]" if comment else text


def _group_titles(measure: JsonDict) -> dict[str, str]:
    titles: dict[str, str] = {}
    for group in as_list(measure.get("groups")):
        group = as_dict(group)
        gid = clean(group.get("id"))
        if gid:
            titles[gid] = clean(group.get("title")) or gid
    return titles


def _values(items: object, titles: Mapping[str, str], render: Any) -> str:
    out = []
    for m in as_list(items):
        m = as_dict(m)
        gid = clean(m.get("groupId"))
        out.append(f"{titles.get(gid, gid)} {render(m)}".strip())
    return "; ".join(out)


def _analysis(analysis: JsonDict, titles: Mapping[str, str]) -> str:
    groups = [titles.get(g, g) for g in strings(analysis.get("groupIds"))]
    head = f"Statistical analysis ({' vs '.join(groups)})" if groups else "Statistical analysis"
    estimate = " ".join(
        filter(None, [clean(analysis.get("paramType")), clean(analysis.get("paramValue"))])
    )
    lower, upper = clean(analysis.get("ciLowerLimit")), clean(analysis.get("ciUpperLimit"))
    if lower or upper:
        pct = clean(analysis.get("ciPctValue"))
        sides = " one-sided" if analysis.get("ciNumSides") == "ONE_SIDED" else ""
        ci = f"{pct}%{sides} CI" if pct else f"{sides.strip()} CI".strip()
        estimate += f" ({ci} {lower or 'NA'} to {upper or 'NA'})"
    details = [estimate.strip()] if estimate.strip() else []
    p_value = clean(analysis.get("pValue"))
    if p_value:
        details.append(f"p{p_value}" if p_value[0] in "<>≤≥=" else f"p={p_value}")
    method = clean(analysis.get("statisticalMethod"))
    if method:
        details.append(method)
    kind = label(analysis.get("nonInferiorityType"))
    if kind:
        details.append(f"{kind.lower()} test")
    first = f"{head}: {', '.join(details)}" if details else head
    comments = [
        clean(analysis.get(k))
        for k in (
            "groupDescription",
            "pValueComment",
            "estimateComment",
            "otherAnalysisDescription",
        )
    ]
    return sentences([first, *comments])


def render_outcome_measure(measure: JsonDict) -> str:
    """One posted outcome measure as readable sentences (values per group and analyses)."""
    titles = _group_titles(measure)
    kind = label(measure.get("type")) or "Outcome"
    frame = clean(measure.get("timeFrame"))
    parts = [
        f"{kind} outcome: {clean(measure.get('title'))}",
        clean(measure.get("description")),
        f"Time frame: {frame}" if frame else "",
    ]
    population = clean(measure.get("populationDescription"))
    if population:
        parts.append(f"Analysis population: {population}")
    if measure.get("reportingStatus") == "NOT_POSTED":
        return sentences([*parts, "Results not posted"])
    for denom in as_list(measure.get("denoms")):
        denom = as_dict(denom)
        units = clean(denom.get("units")) or "Participants"
        counted = _values(denom.get("counts"), titles, lambda m: clean(m.get("value")))
        if counted:
            parts.append(f"{units} analysed: {counted}")
    dispersion = _DISPERSION.get(
        str(measure.get("dispersionType")), label(measure.get("dispersionType"))
    )
    unit = clean(measure.get("unitOfMeasure"))
    param = label(measure.get("paramType")) or "Value"
    for cls in as_list(measure.get("classes")):
        cls = as_dict(cls)
        for category in as_list(cls.get("categories")):
            category = as_dict(category)
            where = " — ".join(
                filter(None, [clean(cls.get("title")), clean(category.get("title"))])
            )
            values = _values(
                category.get("measurements"), titles, lambda m: _measurement(m, dispersion, unit)
            )
            if values:
                parts.append(f"{param}{f' ({where})' if where else ''}: {values}")
    parts.extend(_analysis(as_dict(a), titles) for a in as_list(measure.get("analyses")))
    return sentences(parts)
