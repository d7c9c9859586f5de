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

mutmut's results live in ``mutants/`` (ignored by git, gone with the checkout), and running
every module of audit/ takes more machine time than one sitting. ``--record`` therefore keeps
each complete module's tally in the **ledger** (``tests/audit/data/mutation-ledger.toml``,
committed) with the SHA-256 of the source it was measured on; ``--ledger`` prints the score of
audit/ from the ledger alone: a module whose source changed since is ``stale`` and a module
never recorded is ``not run``, and neither is counted. A module is recorded only when its
results are newer than its source (a file edited after the run is refused). A recorded
survivor found equivalent later (listed with its reason) leaves the denominator without a
rerun; one killed by a test written later still counts as a survivor until the module is run
again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "mutants"
EQUIVALENT = Path(__file__).resolve().parent / "data" / "mutation-equivalent"
"""One TOML file per module of audit/ (``verdicts.toml``, ``references.structured.toml``):
mutant name = why no test can kill it."""

LEDGER = Path(__file__).resolve().parent / "data" / "mutation-ledger.toml"
"""The tally of every module run to its last mutant, with the source it was measured on."""

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
    results_mtime: float = 0.0  # when mutmut last wrote the module's results

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
        codes = data["exit_code_by_key"]  # empty: mutmut found nothing to mutate
        module = meta.relative_to(mutants).as_posix().removesuffix(".meta")
        score = score_module(module, codes, equivalent)
        score.seconds = sum(t or 0.0 for t in data.get("durations_by_key", {}).values())
        score.results_mtime = meta.stat().st_mtime
        scores.append(score)
    return scores


# --- the ledger --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One module's recorded tally: ``survived`` and ``no_tests`` name the non-equivalent
    ones (an equivalent survivor is only counted, its reason is in its TOML file)."""

    module: str
    sha256: str
    recorded: str
    mutants: int
    killed: int
    equivalent: int
    survived: tuple[str, ...] = ()
    no_tests: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def counted(self) -> int:
        return self.mutants - self.equivalent

    def reviewed(self, equivalent: Mapping[str, str]) -> Entry:
        """This entry with the survivors listed as equivalent since it was recorded counted as
        equivalent (their reason is in the TOML file now). A kill test written since counts
        only after a rerun: the ledger keeps no kill it did not see."""
        now = [n for n in self.survived + self.no_tests if n in equivalent]
        if not now:
            return self
        return replace(
            self,
            equivalent=self.equivalent + len(now),
            survived=tuple(n for n in self.survived if n not in equivalent),
            no_tests=tuple(n for n in self.no_tests if n not in equivalent),
        )


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def audit_modules(root: Path = ROOT) -> list[str]:
    """Every module of audit/ mutmut mutates (``audit/evaluation/`` is the harness)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in (root / "audit").rglob("*.py")
        if "evaluation" not in p.relative_to(root / "audit").parts
    )


def entry_of(score: ModuleScore, equivalent: Mapping[str, str], source: Path) -> Entry:
    non_equivalent = [n for n in score.survived if n not in equivalent]
    return Entry(
        module=score.module,
        sha256=source_digest(source),
        recorded=datetime.fromtimestamp(score.results_mtime, UTC).strftime("%Y-%m-%dT%H:%MZ"),
        mutants=score.mutants,
        killed=score.killed,
        equivalent=score.equivalent,
        survived=tuple(non_equivalent),
        no_tests=tuple(n for n in score.no_tests if n not in equivalent),
        seconds=round(score.seconds),
    )


def load_ledger(path: Path = LEDGER) -> dict[str, Entry]:
    """The recorded modules; an entry whose counts do not add up is an error (ValueError)."""
    if not path.is_file():
        return {}
    ledger: dict[str, Entry] = {}
    for module, fields in tomllib.loads(path.read_text(encoding="utf-8")).items():
        try:
            entry = Entry(
                module=module,
                sha256=str(fields["sha256"]),
                recorded=str(fields["recorded"]),
                mutants=int(fields["mutants"]),
                killed=int(fields["killed"]),
                equivalent=int(fields["equivalent"]),
                survived=tuple(fields.get("survived", ())),
                no_tests=tuple(fields.get("no_tests", ())),
                seconds=float(fields.get("seconds", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path.name}: [{module}] is malformed ({error})") from None
        left = entry.mutants - entry.killed - entry.equivalent
        if left != len(entry.survived) + len(entry.no_tests) or left < 0:
            raise ValueError(f"{path.name}: [{module}] counts do not add up")
        ledger[module] = entry
    return ledger


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a TOML basic string for these names


def write_ledger(ledger: Mapping[str, Entry], path: Path = LEDGER) -> None:
    lines = [
        "# The mutation tally of every module of audit/ run to its last mutant, written by",
        "# `python -m tests.audit.mutation_score --record` (docs/mutation.md). sha256 is the",
        "# source the module was measured on: once it changes, the entry is stale.",
    ]
    for module in sorted(ledger):
        e = ledger[module]
        lines += [
            "",
            f"[{_toml_string(module)}]",
            f"sha256 = {_toml_string(e.sha256)}",
            f"recorded = {_toml_string(e.recorded)}",
            f"mutants = {e.mutants}",
            f"killed = {e.killed}",
            f"equivalent = {e.equivalent}",
            f"survived = [{', '.join(_toml_string(n) for n in e.survived)}]",
            f"no_tests = [{', '.join(_toml_string(n) for n in e.no_tests)}]",
            f"seconds = {e.seconds:g}",
        ]
    temporary = path.with_suffix(".toml.tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(path)


def record(
    scores: Iterable[ModuleScore],
    equivalent: Mapping[str, str],
    ledger: dict[str, Entry],
    root: Path = ROOT,
) -> list[str]:
    """Put every complete module's tally into ``ledger``; returns one line per module left
    out (unchecked mutants, or a source edited after its results)."""
    refused = []
    untouched = 0
    for score in scores:
        source = root / score.module
        if score.mutants and len(score.other) == score.mutants:
            untouched += 1
        elif not score.complete:
            refused.append(f"{score.module}: not recorded, {len(score.other)} mutants unchecked")
        elif not source.is_file() or source.stat().st_mtime > score.results_mtime:
            refused.append(f"{score.module}: not recorded, the source changed after the run")
        else:
            ledger[score.module] = entry_of(score, equivalent, source)
    if untouched:
        refused.append(f"{untouched} modules not recorded: none of their mutants checked")
    return refused


def ledger_table(
    ledger: Mapping[str, Entry], root: Path = ROOT, equivalent: Mapping[str, str] | None = None
) -> tuple[str, float | None]:
    """The score of audit/ from the ledger: every module, counted only when its source is
    the one it was measured on; a recorded survivor listed in ``equivalent`` since is counted
    as equivalent (:meth:`Entry.reviewed`)."""
    lines = [
        "| module | mutants | killed | survived | equivalent | score | recorded |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    killed = counted = mutants = 0
    missing: list[str] = []
    for module in audit_modules(root):
        entry = ledger.get(module)
        if entry is None:
            missing.append(module)
            continue
        entry = entry.reviewed(equivalent or {})
        if entry.sha256 != source_digest(root / module):
            score = "stale (source changed)"
        elif not entry.mutants:
            score = "no mutants"
        else:
            score = percent(entry.killed, entry.counted)
            killed += entry.killed
            counted += entry.counted
            mutants += entry.mutants
        lines.append(
            f"| {module} | {entry.mutants} | {entry.killed} "
            f"| {len(entry.survived) + len(entry.no_tests)} | {entry.equivalent} | {score} "
            f"| {entry.recorded} |"
        )
    lines.append(
        f"| **total (current entries)** | {mutants} | {killed} | | | {percent(killed, counted)} | |"
    )
    if missing:
        lines.append("")
        lines.append(f"not run ({len(missing)}): " + ", ".join(missing))
    return "\n".join(lines), (100 * killed / counted if counted else None)


def table(scores: list[ModuleScore]) -> tuple[str, float | None]:
    """The Markdown table and the total score (None when no module is complete)."""
    lines = [
        "| module | mutants | killed | survived | no test | equivalent | score | mutant-seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    killed = counted = 0
    for s in scores:
        score = percent(s.killed, s.counted) if s.complete else f"not run ({len(s.other)} left)"
        if not s.mutants:
            score = "no mutants"
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
    parser.add_argument(
        "--record", action="store_true", help="keep the complete modules' tallies in the ledger"
    )
    parser.add_argument(
        "--ledger", action="store_true", help="the score of audit/ from the ledger alone"
    )
    parser.add_argument("--mutants", type=Path, default=MUTANTS, help=argparse.SUPPRESS)
    parser.add_argument("--ledger-file", type=Path, default=LEDGER, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        equivalent = load_equivalent()
        ledger = load_ledger(args.ledger_file)
        if args.ledger:
            return _print_ledger(ledger, args, equivalent)
        scores = load_scores(args.mutants, equivalent)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.record:
        for line in record(scores, equivalent, ledger, args.root):
            print(line, file=sys.stderr)
        write_ledger(ledger, args.ledger_file)
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


def _print_ledger(
    ledger: Mapping[str, Entry], args: argparse.Namespace, equivalent: Mapping[str, str]
) -> int:
    text, total = ledger_table(ledger, args.root, equivalent)
    print(text)
    if args.survivors:
        for entry in ledger.values():
            left = entry.reviewed(equivalent)
            for name in left.survived + left.no_tests:
                print(f"- {name}: survived")
    if total is None:
        print(f"error: no current entry in {args.ledger_file.name}", file=sys.stderr)
        return 2
    if args.min is not None and total < args.min:
        print(f"error: mutation score {total:.1f} % is below {args.min:g} %", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
