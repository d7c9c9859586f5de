"""The injected faults of :mod:`audit.evaluation.faults`: each breaks one decision of the audit
(module docstring there), as a patch of one attribute of the audit's modules.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from unittest import mock

import audit.engine
import audit.folding
import audit.keys
import audit.overall
import audit.verdicts
from audit.report import Metrics

Patch = Callable[[ExitStack], None]


@dataclass(frozen=True)
class Fault:
    name: str
    group: str
    patch: Patch
    expected_miss: str | None = None  # why the evaluation cannot catch it
    replant: bool = False  # the fault changes minting: plant again under it


def _set(stack: ExitStack, target: object, name: str, value: object) -> None:
    if not hasattr(target, name):
        raise LookupError(f"{getattr(target, '__name__', target)}.{name} does not exist")
    stack.enter_context(mock.patch.object(target, name, value))


# --- folding ---------------------------------------------------------------------------------


def _unfold(char: str) -> Patch:
    def patch(stack: ExitStack) -> None:
        table = audit.folding.FOLD_TABLE
        if ord(char) not in table:
            raise LookupError(f"U+{ord(char):04X} is not in audit.folding.FOLD_TABLE")
        stack.enter_context(mock.patch.dict(table))
        del table[ord(char)]

    return patch


class _NoNormalize:
    """``unicodedata`` with ``normalize`` doing nothing (the NFC steps of the fold removed)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(unicodedata, name)

    @staticmethod
    def normalize(form: str, text: str) -> str:
        del form
        return text


def _fold_faults() -> Iterator[Fault]:
    spaces = "NO-BREAK SPACE", "FIGURE SPACE", "NARROW NO-BREAK SPACE"
    for char in sorted(chr(c) for c in audit.folding.FOLD_TABLE):
        name = unicodedata.name(char, f"U+{ord(char):04X}")
        miss = None
        if name in spaces:
            miss = (
                "equivalent: the whitespace step (str.isspace) already reads it as a space, "
                "so the table entry changes nothing"
            )
        yield Fault(f"fold removed: U+{ord(char):04X} {name}", "folding", _unfold(char), miss)
    yield Fault(
        "whitespace read as ASCII only",
        "folding",
        lambda s: _set(
            s, audit.folding, "spaced", lambda t: re.sub(r"[ \t\n\r\f\v]+", " ", t).strip()
        ),
    )
    yield Fault(
        "whitespace runs not collapsed",
        "folding",
        lambda s: _set(s, audit.folding, "spaced", str.strip),
    )
    yield Fault(
        "no Unicode normalization (NFC)",
        "folding",
        lambda s: _set(s, audit.folding, "unicodedata", _NoNormalize()),
    )


# --- lenient comparators -----------------------------------------------------------------------


def _lenient(norm: Callable[[str], str]) -> Patch:
    """The quote check comparing ``norm`` of both sides (the passages as stored)."""

    def patch(stack: ExitStack) -> None:
        def check(folded: str, texts: Any) -> Any:
            if not folded:
                return None
            needle = norm(folded)
            for where, passage in (
                ("issued", texts.issued),
                *(("issued", p) for p in texts.others),
                ("current", texts.current),
            ):
                if passage is not None and needle in norm(passage.folded):
                    return where, passage
            return None

        _set(stack, audit.verdicts, "_check_folded", check)

    return patch


def _strip_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def _comparator_faults() -> Iterator[Fault]:
    lenient = {
        "case ignored": str.casefold,
        "accents ignored": _strip_marks,
        "NFKC instead of NFC (superscripts, units)": lambda t: unicodedata.normalize("NFKC", t),
        "punctuation ignored": lambda t: re.sub(r"[^\w\s]", "", t),
        "digits ignored": lambda t: re.sub(r"\d", "0", t),
        "spaces ignored": lambda t: t.replace(" ", ""),
        "only the first 40 characters compared": lambda t: t[:40],
        "the word 'not' ignored": lambda t: t.replace(" not ", " "),
        "word order ignored": lambda t: " ".join(sorted(t.split())),
    }
    for name, norm in lenient.items():
        yield Fault(f"lenient comparator: {name}", "comparator", _lenient(norm))
    original = audit.verdicts._check_folded

    def empty_passes(folded: str, texts: Any) -> Any:
        return ("issued", texts.issued) if not folded else original(folded, texts)

    yield Fault(
        "lenient comparator: an empty quote passes",
        "comparator",
        lambda s: _set(s, audit.verdicts, "_check_folded", empty_passes),
    )


# --- check codes -------------------------------------------------------------------------------


def _pathless(stack: ExitStack) -> None:
    """Check codes computed over the record and version only: mint and verify agree."""
    check_code, verifies = audit.keys.Keyring.check_code, audit.keys.Keyring.verifies
    _set(stack, audit.keys.Keyring, "check_code", lambda k, m: check_code(k, m.split("/")[0]))
    _set(stack, audit.keys.Keyring, "verifies", lambda k, m, c: verifies(k, m.split("/")[0], c))


def _check_faults() -> Iterator[Fault]:
    verifies = audit.keys.Keyring.verifies
    yield Fault("check code ignores the path", "check code", _pathless, replant=True)
    yield Fault(
        "check code: only the first 4 characters compared",
        "check code",
        lambda s: _set(
            s,
            audit.keys.Keyring,
            "verifies",
            lambda k, m, c: verifies(k, m, c) or c[:4] == k.check_code(m)[:4],
        ),
    )
    yield Fault(
        "check code: retired keys ignored, any key accepted",
        "check code",
        lambda s: _set(s, audit.keys.Keyring, "verifies", lambda k, m, c: len(c) == 5),
    )


# --- the ladder, quotes and flags -------------------------------------------------------------


def _ladder_without(verdict: str) -> Patch:
    def patch(stack: ExitStack) -> None:
        ladder = tuple(r for r in audit.verdicts.LADDER if r[0] != verdict)
        if len(ladder) == len(audit.verdicts.LADDER):
            raise LookupError(f"no {verdict} rule in audit.verdicts.LADDER")
        _set(stack, audit.verdicts, "LADDER", ladder)

    return patch


def _rule_ignoring(verdict: str, prefix: str) -> Patch:
    """The ladder rule for ``verdict`` no longer saying what starts with ``prefix``."""

    def patch(stack: ExitStack) -> None:
        def wrap(rule: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
            def wrong(f: Any) -> str | None:
                detail = rule(f)
                return None if detail is not None and re.match(prefix, detail) else detail

            return wrong

        ladder = tuple((v, wrap(r) if v == verdict else r) for v, r in audit.verdicts.LADDER)
        _set(stack, audit.verdicts, "LADDER", ladder)

    return patch


def _texts(change: Callable[[Any, Any], Any]) -> Patch:
    def patch(stack: ExitStack) -> None:
        texts_of = audit.verdicts.texts_of
        _set(stack, audit.verdicts, "texts_of", lambda f: change(f, texts_of(f)))

    return patch


def _flags_without(name: str) -> Patch:
    def patch(stack: ExitStack) -> None:
        rules = tuple(r for r in audit.verdicts.FLAG_RULES if r[0] != name)
        if len(rules) == len(audit.verdicts.FLAG_RULES):
            raise LookupError(f"no {name} rule in audit.verdicts.FLAG_RULES")
        _set(stack, audit.verdicts, "FLAG_RULES", rules)

    return patch


def _record_changed(rule: str, **fields: object) -> Patch:
    """A flag rule reading the record with ``fields`` replaced (one signal ignored)."""

    def patch(stack: ExitStack) -> None:
        original = getattr(audit.verdicts, rule)

        def wrong(f: Any, texts: Any) -> str | None:
            saved = f.record
            f.record = saved._replace(**fields)
            try:
                return original(f, texts)
            finally:
                f.record = saved

        rules = tuple((n, wrong if r is original else r) for n, r in audit.verdicts.FLAG_RULES)
        _set(stack, audit.verdicts, "FLAG_RULES", rules)

    return patch


def _ladder_faults() -> Iterator[Fault]:
    for verdict in ("forged", "unavailable", "withdrawn"):
        yield Fault(f"ladder: the {verdict} rule removed", "verdict", _ladder_without(verdict))
    for name, verdict, prefix in (
        ("a failed source not unavailable", "unavailable", r"the \w+ harvest failed"),
        ("an unharvested source not unavailable", "unavailable", r"\w+ was not harvested"),
        ("withdrawn upstream ignored", "withdrawn", r".* was withdrawn upstream"),
        ("a version not retained ignored", "withdrawn", r"version not retained"),
        ("a missing passage ignored", "withdrawn", r"no passage"),
    ):
        yield Fault(f"ladder: {name}", "verdict", _rule_ignoring(verdict, prefix))
    yield Fault(
        "quote: the text as it is now not consulted",
        "verdict",
        _texts(lambda f, t: audit.verdicts.Texts(t.issued, None, t.others)),
    )
    yield Fault(
        "quote: an unpinned handle checked against the current version only",
        "verdict",
        _texts(lambda f, t: audit.verdicts.Texts(t.issued, t.current, ())),
    )
    yield Fault(
        "quote: a pinned handle checked against every retained version",
        "verdict",
        _texts(
            lambda f, t: audit.verdicts.Texts(
                t.issued,
                t.current,
                tuple(p for p in (f.held or {}).values() if p not in (t.issued, t.current)),
            )
        ),
    )
    original = audit.verdicts._check_folded

    def issued_always(folded: str, texts: Any) -> Any:
        found = original(folded, texts)
        return None if found is None else ("issued", found[1])

    yield Fault(
        "quote: checked_against always 'issued'",
        "verdict",
        lambda s: _set(s, audit.verdicts, "_check_folded", issued_always),
    )

    def current_first(folded: str, texts: Any) -> Any:
        if folded and texts.current is not None and folded in texts.current.folded:
            return "current", texts.current
        return original(folded, texts)

    yield Fault(
        "quote: the current text preferred to the text as issued",
        "verdict",
        lambda s: _set(s, audit.verdicts, "_check_folded", current_first),
    )


def _flag_faults() -> Iterator[Fault]:
    for name in (
        "retracted",
        "expression_of_concern",
        "preprint",
        "version_changed",
        "not_refreshed",
    ):
        yield Fault(f"flag dropped: {name}", "flags", _flags_without(name))
    yield Fault(
        "flag: retraction notices ignored",
        "flags",
        _record_changed("flag_retracted", relations=()),
    )
    yield Fault(
        "flag: expression-of-concern notices ignored",
        "flags",
        _record_changed("flag_expression_of_concern", relations=()),
    )
    yield Fault(
        "flag: the source's preprint mark ignored",
        "flags",
        _record_changed("flag_preprint", preprint=None),
    )
    yield Fault(
        "flag: not_refreshed ignores the record's refresh",
        "flags",
        _record_changed("flag_not_refreshed", refreshed=True),
    )
    original = audit.verdicts.flag_version_changed

    def unpinned_too(f: Any, texts: Any) -> str | None:
        detail = original(f, texts)
        record = f.record
        if detail is None and f.handle.locator.version is None and len(record.versions) > 1:
            return f"current version {record.current_version}"
        return detail

    yield Fault(
        "flag: version_changed on unpinned handles too",
        "flags",
        lambda s: _set(
            s,
            audit.verdicts,
            "FLAG_RULES",
            tuple((n, unpinned_too if r is original else r) for n, r in audit.verdicts.FLAG_RULES),
        ),
    )


# --- sentence statuses, metrics, the overall verdict ----------------------------------------


def _status_faults() -> Iterator[Fault]:
    wrong: dict[str, Callable[[Any], str]] = {
        "any citation makes a sentence cited": lambda v: "cited" if v else "uncited",
        "invalid_only read as uncited": lambda v: "cited" if "ok" in v else "uncited",
        "cited only when every citation is ok": lambda v: (
            "uncited" if not v else "cited" if all(x == "ok" for x in v) else "invalid_only"
        ),
    }
    for name, rule in wrong.items():
        yield Fault(
            f"sentence status: {name}",
            "sentence status",
            lambda s, rule=rule: _set(s, audit.engine, "status_of", rule),
        )


def _metric(update: Callable[[Metrics, Any], dict[str, object]]) -> Patch:
    def patch(stack: ExitStack) -> None:
        metrics_of = audit.engine.metrics_of

        def wrong(sentences: Any) -> Metrics:
            right = metrics_of(sentences)
            return right.model_copy(update=update(right, sentences))

        _set(stack, audit.engine, "metrics_of", wrong)

    return patch


def _metric_faults() -> Iterator[Fault]:
    yield Fault(
        "metric: fabricated counts forged only",
        "metrics",
        _metric(lambda m, _: {"fabricated": m.by_verdict.forged}),
    )
    yield Fault(
        "metric: verbatim_quotes counts every quote",
        "metrics",
        _metric(lambda m, _: {"verbatim_quotes": m.quotes}),
    )
    yield Fault(
        "metric: checkable_citations counts unavailable ones",
        "metrics",
        _metric(lambda m, _: {"checkable_citations": m.citations}),
    )
    yield Fault(
        "metric: citation_validity over all citations",
        "metrics",
        _metric(
            lambda m, _: {
                "citation_validity": round(m.valid_citations / m.citations, 4)
                if m.citations
                else None
            }
        ),
    )
    yield Fault(
        "metric: retracted_cited never counted",
        "metrics",
        _metric(lambda m, _: {"retracted_cited": 0}),
    )
    yield Fault(
        "metric: headings and lead-ins counted as claims",
        "metrics",
        lambda s: _set(s, audit.overall, "is_claim", lambda kind, n: True),
    )


def _warn_without(item: str) -> Patch:
    def patch(stack: ExitStack) -> None:
        items = tuple(i for i in audit.overall.WARN_ITEMS if i != item)
        if len(items) == len(audit.overall.WARN_ITEMS):
            raise LookupError(f"{item} is not in audit.overall.WARN_ITEMS")
        _set(stack, audit.overall, "WARN_ITEMS", items)

    return patch


def _policy_without(item: str) -> Patch:
    """The default fail-on policy without ``item`` (where the engine and the rule read it)."""

    def patch(stack: ExitStack) -> None:
        policy = audit.overall.fail_on_policy

        def wrong(extra: Any = ()) -> list[Any]:
            return [i for i in policy(extra) if i != item]

        _set(stack, audit.engine, "fail_on_policy", wrong)
        _set(stack, audit.overall, "fail_on_policy", wrong)

    return patch


def _overall_faults() -> Iterator[Fault]:
    for item in (
        "withdrawn",
        "quote_mismatch",
        "invalid_only",
        "retracted",
        "uncited",
        "not_refreshed",
    ):
        yield Fault(f"overall: {item} does not warn", "overall", _warn_without(item))
    yield Fault(
        "overall: unavailable does not make the answer incomplete",
        "overall",
        lambda s: _set(s, audit.overall, "INCOMPLETE_ITEMS", ("unresolved",)),
    )
    for item in ("malformed", "forged"):
        yield Fault(f"overall: {item} does not fail", "overall", _policy_without(item))
    overall = audit.engine.overall

    def incomplete_below_warn(sentences: Any, fail_on: Any, checks: Any = ()) -> Any:
        verdict, reasons = overall(sentences, fail_on, checks)
        if verdict == "incomplete" and any(r.startswith("warn:") for r in reasons):
            return "warn", reasons
        return verdict, reasons

    yield Fault(
        "overall: warn ranked above incomplete",
        "overall",
        lambda s: _set(s, audit.engine, "overall", incomplete_below_warn),
    )


def faults() -> list[Fault]:
    """Every fault, in report order."""
    from audit.evaluation.claim_faults import claim_faults  # it builds on this module

    return [
        *_fold_faults(),
        *_comparator_faults(),
        *_check_faults(),
        *_ladder_faults(),
        *_flag_faults(),
        *_status_faults(),
        *_metric_faults(),
        *_overall_faults(),
        *claim_faults(),
    ]
