"""Injected faults in the reference check and the claim-support judge (the catalogue's other
groups are in :mod:`audit.evaluation.fault_catalogue`): each patches one attribute, as a real
bug would, and the evaluation of :mod:`audit.evaluation.claim_cases` must notice.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import audit.overall
import audit.references.answer
import audit.references.check
import audit.support.cues
import audit.support.numbers
import audit.support.rules
from audit.evaluation.fault_catalogue import Fault, Patch, _set, _warn_without
from audit.references.compare import FieldCheck
from audit.references.resolve import Lookup


def _always(name: str, outcome: str) -> Patch:
    """A comparison rule of :mod:`audit.references.compare` that always answers ``outcome``."""

    def rule(seen: Any, expected: Any) -> FieldCheck:
        field = name.removeprefix("compare_").removesuffix("s")
        shown = None if seen is None else str(seen)
        return FieldCheck(field, outcome, shown, None if expected is None else str(expected))  # type: ignore[arg-type]

    return lambda s: _set(s, audit.references.check, name, rule)


def _every_identifier_valid(stack: ExitStack) -> None:
    check = audit.references.check.check_reference

    def wrong(ref: Any, resolver: Any, found: Any) -> Any:
        ids = tuple(i.model_copy(update={"valid": True, "problem": None}) for i in ref.identifiers)
        return check(ref.model_copy(update={"identifiers": ids}), resolver, found)

    _set(stack, audit.references.check, "check_reference", wrong)


def _absent(lookup: Lookup) -> Lookup:
    if lookup.status != "unreachable":
        return lookup
    return Lookup(lookup.resolver, lookup.key, "unmatched", lookup.records, lookup.detail, True)


def _outage_read_as_absence(stack: ExitStack) -> None:
    """An unreachable look-up read as a registry that answered "no such record"."""
    check = audit.references.check.check_reference

    class Absent:
        def __init__(self, inner: Any) -> None:
            self.inner, self.name = inner, inner.name

        def by_identifiers(self, keys: Any) -> dict[Any, Lookup]:
            return {k: _absent(v) for k, v in self.inner.by_identifiers(keys).items()}

        def by_title(self, title: str) -> Lookup:
            return _absent(self.inner.by_title(title))

    def wrong(ref: Any, resolver: Any, found: Any) -> Any:
        return check(ref, Absent(resolver), {k: _absent(v) for k, v in found.items()})

    _set(stack, audit.references.check, "check_reference", wrong)


def _reference_faults() -> Iterator[Fault]:
    group = "references"
    yield Fault("references: any title matches", group, _always("compare_titles", "match"))
    yield Fault("references: any year matches", group, _always("compare_years", "match"))
    yield Fault("references: any first author matches", group, _always("compare_authors", "match"))
    yield Fault(
        "references: an impossible identifier read as valid", group, _every_identifier_valid
    )
    yield Fault("references: an outage read as no such record", group, _outage_read_as_absence)
    yield Fault(
        "references: no flags from the record",
        group,
        lambda s: _set(
            s, audit.references.check, "_flags", lambda record: audit.references.check.Flags()
        ),
    )
    yield Fault(
        "references: handles not blanked (a handle also read as a reference)",
        group,
        lambda s: _set(s, audit.references.answer, "blank_spans", lambda text, spans: text),
    )
    yield Fault(
        "overall: a hallucinated reference does not fail",
        "overall",
        lambda s: _set(s, audit.overall, "ALWAYS_FAIL", ()),
    )
    yield Fault(
        "overall: an unresolved reference does not make the answer incomplete",
        "overall",
        lambda s: _set(s, audit.overall, "INCOMPLETE_ITEMS", ("unavailable",)),
    )
    yield Fault(
        "overall: a mismatched reference does not warn", "overall", _warn_without("mismatch")
    )
    yield Fault(
        "overall: a reference's flags not counted",
        "overall",
        lambda s: _set(s, audit.overall, "REFERENCE_FLAGS", ()),
    )


def _support_faults() -> Iterator[Fault]:
    group = "support"
    cues, rules = audit.support.cues, audit.support.rules
    yield Fault(
        "support: hedges not read", group, lambda s: _set(s, cues, "hedged", lambda t, w: False)
    )
    yield Fault(
        "support: negation not read",
        group,
        lambda s: _set(s, cues, "negated", lambda t, w, i: False),
    )
    yield Fault(
        "support: null findings not read",
        group,
        lambda s: _set(s, cues, "null_findings", lambda t, a, b: []),
    )
    yield Fault(
        "support: direction words not read",
        group,
        lambda s: _set(s, cues, "direction", lambda word: None),
    )
    yield Fault(
        "support: figures not compared",
        group,
        lambda s: _set(s, audit.support.numbers, "quantities", lambda t, a=0, b=None: []),
    )
    quantity = audit.support.numbers.Quantity
    agrees = quantity.agrees
    yield Fault(
        "support: a bound read as an exact figure (a figure within it ruled out)",
        group,
        lambda s: _set(s, quantity, "excludes", lambda self, other: not agrees(self, other)),
    )
    yield Fault(
        "support: a claim's bound never checked",
        group,
        lambda s: _set(
            s, quantity, "agrees", lambda self, other: self.sign is not None or agrees(self, other)
        ),
    )
    yield Fault(
        "support: not_mentioned never given",
        group,
        lambda s: _set(s, rules, "Thresholds", functools.partial(rules.Thresholds, mention=0.0)),
    )
    yield Fault(
        "overall: a contradicted citation does not warn", "overall", _warn_without("contradicted")
    )


def claim_faults() -> list[Fault]:
    """The reference-check and support faults, in report order."""
    return [*_reference_faults(), *_support_faults()]
