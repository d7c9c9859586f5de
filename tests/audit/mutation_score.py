"""The mutation score of audit/, per module, from mutmut's results (``make mutation``).

``python -m tests.audit.mutation_score [--min PERCENT] [--survivors]`` reads the ``.meta`` files
mutmut leaves in ``mutants/audit/`` and prints one Markdown row per module: its mutants, how
many were killed (a timeout counts as killed: the tests noticed), survived, had no test, and
how many of the survivors are equivalent (listed with a reason in
``tests/audit/data/mutation-equivalent/``, one file per module), and the sum of its mutants'
wall times as mutmut measured them (two run at once). The score is killed / (mutants − equivalent),
over the modules whose every mutant was checked; a module with unchecked mutants is printed as
``not run (N left)``, with what was checked so far, and left out of the total, never counted
as a pass. ``--min`` exits 1 when the
total is below it; no results at all is an error (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "mutants"
EQUIVALENT = Path(__file__).resolve().parent / "data" / "mutation-equivalent"
"""One TOML file per module of audit/ (``verdicts.toml``, ``references.structured.toml``):
mutant name = why no test can kill it."""

TIMEOUT_CODES = frozenset({24, -24, 36, 152, 255})
"""mutmut's exit codes for a mutant that ran out of time (wall clock or its CPU limit)."""
KILLED_CODES = frozenset({1, 3}) | TIMEOUT_CODES
"""mutmut's exit codes for a mutant the tests noticed (a failure, a pytest error, a timeout)."""
SURVIVED_CODE = 0
NO_TESTS_CODES = frozenset({5, 33})


@dataclass
class ModuleScore:
    module: str
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    no_tests: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # unchecked, skipped, suspicious, ...
    equivalent: int = 0
    seconds: float = 0.0  # the sum of each mutant's wall time (mutmut runs two at once)

    @property
    def mutants(self) -> int:
        return self.killed + len(self.survived) + len(self.no_tests) + len(self.other)

    @property
    def complete(self) -> bool:
        return not self.other

    @property
    def counted(self) -> int:
        """The non-equivalent mutants: the score's denominator."""
        return self.mutants - self.equivalent


def load_equivalent(folder: Path = EQUIVALENT) -> dict[str, str]:
    """Every listed equivalent mutant with its reason; a name filed under another module's
    file, or without a reason, is an error (ValueError)."""
    listed: dict[str, str] = {}
    for path in sorted(folder.glob("*.toml")):
        prefix = f"audit.{path.stem}.x"
        for name, reason in tomllib.loads(path.read_text(encoding="utf-8")).items():
            if not name.startswith(prefix) or not str(reason).strip():
                raise ValueError(
                    f"{path.name}: {name!r} is not a mutant of audit.{path.stem} with a reason"
                )
            listed[name] = reason
    return listed


def score_module(
    module: str, exit_codes: Mapping[str, int | None], equivalent: Iterable[str] = ()
) -> ModuleScore:
    """One module's tally from mutmut's exit code per mutant. A mutant listed as equivalent
    must have survived: one a test failed was not equivalent, so the list is stale (an
    error). A listed one that ran out of time (an equivalent mutant can be slower: a codec
    name looked up instead of the fast path, on a loaded host) is counted as equivalent,
    never as killed."""
    equivalent = set(equivalent)
    score = ModuleScore(module)
    for name, code in sorted(exit_codes.items()):
        if code in TIMEOUT_CODES and name in equivalent:
            score.survived.append(name)
        elif code in KILLED_CODES:
            score.killed += 1
        elif code == SURVIVED_CODE:
            score.survived.append(name)
        elif code in NO_TESTS_CODES:
            score.no_tests.append(name)
        else:
            score.other.append(name)
    for name in equivalent:
        if exit_codes.get(name) in KILLED_CODES - TIMEOUT_CODES:
            raise ValueError(f"{name} is listed as equivalent but was killed")
        if name in score.survived or name in score.no_tests:
            score.equivalent += 1
    return score


def percent(killed: int, counted: int) -> str:
    return f"{100 * killed / counted:.1f} %" if counted else "-"


def load_scores(mutants: Path, equivalent: Mapping[str, str]) -> list[ModuleScore]:
    scores = []
    for meta in sorted((mutants / "audit").rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data["exit_code_by_key"]
        if not codes:
            continue
        module = meta.relative_to(mutants).as_posix().removesuffix(".meta")
        score = score_module(module, codes, equivalent)
        score.seconds = sum(t or 0.0 for t in data.get("durations_by_key", {}).values())
        scores.append(score)
    return scores


def table(scores: list[ModuleScore]) -> tuple[str, float | None]:
    """The Markdown table and the total score (None when no module is complete)."""
    lines = [
        "| module | mutants | killed | survived | no test | equivalent | score | mutant-seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    killed = counted = 0
    for s in scores:
        score = percent(s.killed, s.counted) if s.complete else f"not run ({len(s.other)} left)"
        if s.complete:
            killed += s.killed
            counted += s.counted
        lines.append(
            f"| {s.module} | {s.mutants} | {s.killed} | {len(s.survived)} | {len(s.no_tests)} "
            f"| {s.equivalent} | {score} | {s.seconds:,.0f} |"
        )
    seconds = sum(s.seconds for s in scores if s.complete)
    lines.append(
        f"| **total (modules run)** | | {killed} | | | | {percent(killed, counted)} "
        f"| {seconds:,.0f} |"
    )
    return "\n".join(lines), (100 * killed / counted if counted else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.audit.mutation_score")
    parser.add_argument("--min", type=float, help="exit 1 when the total score is below this")
    parser.add_argument("--survivors", action="store_true", help="list the survivors too")
    parser.add_argument("--mutants", type=Path, default=MUTANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        equivalent = load_equivalent()
        scores = load_scores(args.mutants, equivalent)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not scores:
        print(f"error: no mutmut results in {args.mutants}: run make mutation", file=sys.stderr)
        return 2
    text, total = table(scores)
    print(text)
    if args.survivors:
        for s in scores:
            for name in s.survived + s.no_tests:
                reason = equivalent.get(name)
                print(f"- {name}: {'equivalent: ' + reason if reason else 'survived'}")
    if total is None:
        print("error: no module has all its mutants checked", file=sys.stderr)
        return 2
    if args.min is not None and total < args.min:
        print(f"error: mutation score {total:.1f} % is below {args.min:g} %", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
