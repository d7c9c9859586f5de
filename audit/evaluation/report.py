"""The evaluation's report: a per-category table, the confusion matrix, the failures; JSON."""

from __future__ import annotations

from audit.evaluation.oracle import VERDICTS
from audit.evaluation.scoring import Result

_COLUMNS = (*VERDICTS, "missing")


def summary(result: Result) -> str:
    """One line: the planted cases and whole answers that came out as planted."""
    cases = [s for s in result.scores.values() if s.group != "whole answers"]
    wholes = [s for s in result.scores.values() if s.group == "whole answers"]
    passed, total = sum(s.passed for s in cases), sum(s.renderings for s in cases)
    w_passed, w_total = sum(s.passed for s in wholes), sum(s.renderings for s in wholes)
    categories = sum(1 for s in cases if s.renderings)
    return (
        f"{passed}/{total} planted cases and {w_passed}/{w_total} whole answers came out as "
        f"planted, {categories} categories ({len(result.unplanted)} not planted)"
    )


def to_text(result: Result) -> str:
    """The table, the confusion matrix and every failure."""
    head = (
        f"seed {result.seed}, {result.per_category} cases per category, "
        f"worlds: {', '.join(result.worlds)}"
    )
    lines = [head, "", f"{'category':34} {'group':13} cases distinct  scored  passed  styles"]
    for s in result.scores.values():
        styles = ",".join(sorted(s.styles)) or "-"
        lines.append(
            f"{s.name:34} {s.group:13} {s.cases:5} {s.distinct:8} {s.renderings:7} "
            f"{s.passed:7}  {styles}"
        )
    lines += ["", "citations, planted (rows) against audited (columns):"]
    lines.append(" " * 15 + "".join(f"{c[:9]:>10}" for c in _COLUMNS))
    for want in VERDICTS:
        row = "".join(f"{result.confusion.get((want, got), 0):10}" for got in _COLUMNS)
        lines.append(f"{want:15}{row}")
    extra = sum(n for (want, _), n in result.confusion.items() if want == "missing")
    if extra:
        lines.append(f"{'(not planted)':15}{extra:10} citations the audit found beyond the plan")
    for kind in ("support", "reference"):
        lines += _labels(result, kind)
    lines += ["", summary(result)]
    failures = result.failures
    lines.append("failures: none" if not failures else f"failures ({len(failures)}):")
    lines += [f"  {f}" for f in failures]
    return "\n".join(lines)


def _labels(result: Result, kind: str) -> list[str]:
    """The planted-against-audited matrix of support labels or reference tiers, as rows."""
    cells = {(w, g): n for (w, g), n in result.labels.items() if w.startswith(f"{kind}:")}
    if not cells:
        return []
    names = sorted({w for w, _ in cells} | {g for _, g in cells})
    short = [n.split(":", 1)[1] for n in names]
    lines = ["", f"{kind} {'labels' if kind == 'support' else 'tiers'}, planted (rows) against "
             "audited (columns):"]  # fmt: skip
    lines.append(" " * 15 + "".join(f"{c[:12]:>13}" for c in short))
    for want in names:
        if any(w == want for w, _ in cells):
            row = "".join(f"{cells.get((want, got), 0):13}" for got in names)
            lines.append(f"{want.split(':', 1)[1]:15}{row}")
    return lines


def to_json(result: Result, seconds: float | None = None) -> dict[str, object]:
    """Everything, for ``--json-out``: per category, the confusion matrix, the failures."""
    return {
        "seed": result.seed,
        "per_category": result.per_category,
        "worlds": result.worlds,
        "ok": result.ok,
        "summary": summary(result),
        "seconds": None if seconds is None else round(seconds, 2),
        "categories": [
            {
                "name": s.name,
                "group": s.group,
                "cases": s.cases,
                "distinct_cases": s.distinct,
                "scored": s.renderings,
                "passed": s.passed,
                "styles": sorted(s.styles),
                "failures": s.failures,
            }
            for s in result.scores.values()
        ],
        "confusion": {
            want: {got: n for (w, got), n in sorted(result.confusion.items()) if w == want}
            for want in (*VERDICTS, "missing")
        },
        "labels": {
            want: {got: n for (w, got), n in sorted(result.labels.items()) if w == want}
            for want in sorted({w for w, _ in result.labels})
        },
        "unplanted": result.unplanted,
        "failures": result.failures,
    }
