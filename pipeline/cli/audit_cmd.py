"""CLI: ``citeseal audit`` (answers against a snapshot) and ``citeseal schema report``.

Inputs are read lazily and audited in chunks through one snapshot connection
(:func:`audit.engine.audit_many`), so a directory of thousands of answers streams: each report
is written (or printed) and dropped before the next chunk is read. Exit code: 0 when every
input passes or warns, 1 when any fails, 2 when any input is bad or has nothing to audit (the
others are still audited; each bad one gets its own ``error:`` line and no report).

Each answer's ordinary references (DOIs, PMIDs, NCT numbers… outside its handles, and
reference-list entries that are not handles) are checked against the same snapshot, as
``citeseal check`` checks them, into the report's ``references`` section
(:mod:`audit.references.answer`; docs/audit.md says how their tiers feed the verdict).

``--support`` adds claim support to every ok citation (:func:`audit.support.run.with_support`,
the judge named by ``--judge``); without it the reports are exactly as before.
``--fail-on contradicted`` needs ``--support`` (refused otherwise: it could never fire).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import deque
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from audit.errors import CiteSealError, InputError, LimitExceeded, undecodable_offset
from audit.paths import public_path
from audit.terminal import html_text, one_line
from pipeline.cli.common import keyring_from_settings, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt, SnapshotOpt
from pipeline.cli.support_cmd import JudgeOpt, support_judge
from pipeline.collector import fewer_collections
from pipeline.settings import Settings, source_date_epoch

if TYPE_CHECKING:  # the engine, report models and DuckDB load only when a command runs
    from audit.engine import AuditInput
    from audit.report import FailOnItem, Report

ANSWER_SUFFIXES = (".md", ".markdown", ".txt")
CLAIMS_SUFFIXES = (".json",)


class Format(StrEnum):
    text = "text"
    json = "json"
    md = "md"
    html = "html"


_EXTENSION = {Format.text: "txt", Format.json: "json", Format.md: "md", Format.html: "html"}


@dataclass(frozen=True)
class _Source:
    """One input: a file or stdin (``path`` None), read when its turn comes."""

    label: str
    path: Path | None
    claims: bool


def expand_inputs(names: list[str], *, claims: bool) -> list[_Source]:
    """Files as given, directories as their answer files (sorted), ``-`` as stdin.

    ``.json`` files are structured claims; ``--claims`` makes every input claims JSON.
    """
    sources: list[_Source] = []
    for name in names:
        if name == "-":
            if any(s.path is None for s in sources):
                raise InputError("stdin ('-') can be given only once")
            sources.append(_Source("-", None, claims))
            continue
        path = Path(name)
        if path.is_dir():
            wanted = CLAIMS_SUFFIXES if claims else ANSWER_SUFFIXES + CLAIMS_SUFFIXES
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in wanted)
            if not found:
                raise InputError(
                    f"{path} holds no answers ({', '.join(wanted)} files)",
                )
            sources.extend(_Source(str(p), p, claims or p.suffix in CLAIMS_SUFFIXES) for p in found)
        elif path.is_file():
            sources.append(_Source(str(path), path, claims or path.suffix in CLAIMS_SUFFIXES))
        else:
            raise InputError(f"{path}: no such file or directory")
    return sources


def _read_bytes(source: _Source, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the input, so a huge file is refused without loading it."""
    if source.path is None:
        return sys.stdin.buffer.read(limit + 1)
    try:
        with source.path.open("rb") as stream:
            return stream.read(limit + 1)
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}") from None


def _read(source: _Source) -> AuditInput:
    from audit.citations import MAX_ANSWER_CHARS, parse_answer
    from audit.claims import MAX_CLAIMS_BYTES, parse_claims
    from audit.engine import AuditInput

    label = public_path(source.label, cwd=str(Path.cwd()))  # the report never names a local path
    if source.claims:
        data = _read_bytes(source, MAX_CLAIMS_BYTES)
        return AuditInput(label, parse_claims(data))
    limit = MAX_ANSWER_CHARS * 4  # UTF-8 needs at most 4 bytes per character
    data = _read_bytes(source, limit)
    if len(data) > limit:
        raise LimitExceeded(
            f"answer is over {limit:,} bytes (limit {MAX_ANSWER_CHARS:,} characters)"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {undecodable_offset(error, data)})") from None
    return AuditInput(label, parse_answer(text), text)


class _Inputs:
    """Yields parsed inputs; a bad input is reported on stderr, counted and skipped.

    ``given`` holds the labels of the inputs yielded and not yet reported, as the user gave
    them (reports carry public names), for the summary lines."""

    def __init__(self, sources: list[_Source]) -> None:
        self.sources = sources
        self.bad = 0
        self.given: deque[str] = deque()

    def __iter__(self) -> Iterator[AuditInput]:
        for source in self.sources:
            try:
                parsed = _read(source)
            except CiteSealError as error:
                self.bad += 1
                typer.echo(f"error: {one_line(source.label)}: {one_line(error.message)}", err=True)
                continue
            self.given.append(source.label)
            yield parsed


def parse_fail_on(values: list[str]) -> list[FailOnItem]:
    """``--fail-on`` values (repeatable, comma-separated) checked against the known items."""
    from audit.report import fail_on_items

    parts = [p.strip() for value in values for p in value.split(",")]
    return fail_on_items([p for p in parts if p], option="--fail-on")


def fixed_now() -> datetime | None:
    """``SOURCE_DATE_EPOCH`` as the report time, for reproducible reports."""
    return source_date_epoch(os.environ)


def render(report: Report, fmt: Format) -> str:
    from audit.render_text import render_markdown, render_text

    if fmt is Format.json:
        return report.model_dump_json(indent=2) + "\n"
    if fmt is Format.md:
        return render_markdown(report)
    if fmt is Format.html:
        from audit.render_html import render_report_html  # jinja environment: only when asked

        return html_text(render_report_html(report))  # bidi/control characters as references
    return render_text(report)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder and a rename."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class _OutNames:
    """``<stem>.<ext>`` per input; a clash within the run falls back to ``<name>.<ext>``."""

    def __init__(self, folder: Path, ext: str) -> None:
        self.folder, self.ext, self.used = folder, ext, set[str]()

    def __call__(self, label: str) -> Path:
        base = Path(label).name if label != "-" else "stdin"
        name = f"{Path(base).stem}.{self.ext}"
        if name in self.used:
            name = f"{base}.{self.ext}"
        n = 2
        while name in self.used:
            name, n = f"{base}-{n}.{self.ext}", n + 1
        self.used.add(name)
        return self.folder / name


def _emit(
    reports: Iterator[Report], inputs: _Inputs, fmt: Format, out: Path | None, many: bool
) -> int:
    """Write or print each report; the number of failed reports."""
    from audit.render_text import summary_line

    failed = 0
    names = _OutNames(out, _EXTENSION[fmt]) if out is not None else None
    first = True
    for report in reports:
        label = inputs.given.popleft()  # reports come in input order, one per parsed input
        failed += report.verdict == "fail"
        if names is not None:
            write_atomic(names(report.source), render(report, fmt))
            typer.echo(summary_line(report, label))
        elif fmt is Format.json and many:
            typer.echo(report.model_dump_json())  # JSON Lines: one report per line
        else:
            if many:
                typer.echo(("" if first else "\n") + f"== {summary_line(report, label)}")
            typer.echo(render(report, fmt), nl=False)
        first = False
    return failed


def audit_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="Answers: Markdown/text files, .json claims files, folders of them, or - for "
            "stdin.",
            show_default=False,
            metavar="FILE",
        ),
    ],
    snapshot: SnapshotOpt,
    fmt: Annotated[
        Format, typer.Option("--format", "-f", help="Report format.", case_sensitive=False)
    ] = Format.text,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write one report per input into this folder (<stem>.<ext>), print a summary.",
            file_okay=False,
        ),
    ] = None,
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            help="Also fail on: any verdict, uncited, invalid_only, a flag (retracted, …) or a "
            "reference tier (mismatch, unresolved). Repeatable or comma-separated; malformed "
            "and forged citations and hallucinated references always fail.",
            metavar="ITEM",
        ),
    ] = None,
    claims: Annotated[
        bool, typer.Option("--claims", help="Read every input as structured claims JSON.")
    ] = False,
    support: Annotated[
        bool,
        typer.Option(
            "--support",
            help="Also judge whether each ok citation's passage supports its sentence.",
        ),
    ] = False,
    judge: JudgeOpt = None,
    demo_key: DemoKeyOpt = False,
) -> None:
    """Audit answers' citations against a frozen snapshot (exit 1 on fail, 2 on bad input)."""
    policy = parse_fail_on(fail_on or [])
    if not support and "contradicted" in policy:
        raise InputError("--fail-on contradicted needs --support (claim support is off)")
    if not support and judge is not None:
        raise InputError("--judge needs --support (claim support is off)")
    chosen = support_judge(judge) if support else None
    sources = expand_inputs(files, claims=claims)
    many = len(sources) > 1
    if fmt is Format.html and many and out is None:
        raise InputError("--format html with several inputs needs --out DIR")
    now = fixed_now()
    settings = Settings.from_env()
    keyring = keyring_from_settings(settings, demo_key, create=False)
    trusted = trusted_snapshot(snapshot, settings, seal_policy(settings, demo_key, keyring=keyring))
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(f"cannot create {out}: {error.strerror or error}") from None
    from audit.engine import audit_many

    inputs = _Inputs(sources)
    with (
        fewer_collections(),
        trusted.corpus() as corpus,
        closing(corpus.reference_resolver()) as resolver,
    ):
        reports = audit_many(inputs, corpus, keyring, fail_on=policy, now=now, references=resolver)
        if chosen is not None:
            from audit.support.run import support_many

            reports = support_many(reports, corpus, chosen)
        failed = _emit(reports, inputs, fmt, out, many)
    if inputs.bad:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)


def schema_report() -> None:
    """Print the JSON Schema of audit reports (the keys other tools may rely on)."""
    from audit.report import report_json_schema_text

    typer.echo(report_json_schema_text(), nl=False)


def register(app: typer.Typer) -> None:
    """Attach ``audit`` and ``schema report`` to the root app."""
    app.command("audit")(audit_command)
    schema_app = typer.Typer(
        help="Print the JSON Schemas of citeseal's outputs.", no_args_is_help=True
    )
    schema_app.command("report")(schema_report)
    app.add_typer(schema_app, name="schema")
