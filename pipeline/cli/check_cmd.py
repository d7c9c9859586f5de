"""CLI: ``citeseal check`` — every reference of documents, checked against a snapshot.

Inputs: files (format by extension, or ``--input-format``), folders (every file of a document
extension in them and their sub-folders, dot-folders skipped; ``.json`` files only when named,
since a folder's JSON is rarely CSL-JSON), ``http(s)://`` URLs (fetched:
:mod:`pipeline.check_online.fetch`), or ``-`` for stdin (needs ``--input-format``). Offline by
default; ``--online`` looks up what the snapshot cannot place and keeps it in a lookup
snapshot (:mod:`pipeline.check_online`), which ``--lookup FILE`` re-runs offline. The
snapshot is trusted as ``citeseal audit`` trusts it (manifest, digest and seal). One report
covers every input. Exit code: 0 when nothing listed fails; 1 when ``--fail-on-fabrication``
and any reference is ``hallucinated``, or any reference has a tier or flag of ``--fail-on``;
2 for bad usage or any input that cannot be read (the others are still checked and reported;
each bad one gets its own ``error:`` line).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from audit import __version__
from audit.errors import CiteSealError, InputError, LimitExceeded
from audit.keys import Keyring
from audit.paths import public_path
from audit.terminal import one_line
from pipeline.cli.audit_cmd import write_atomic
from pipeline.cli.common import digest_cache, installation_keyring, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt, SnapshotOpt
from pipeline.settings import Settings

if TYPE_CHECKING:
    from audit.references import ExtractedDocument
    from audit.references.check import CheckReport
    from audit.references.resolve import SnapshotResolver
    from pipeline.check_online import Online
    from pipeline.snapshot.trust import SealPolicy, TrustedSnapshot

FOLDER_SKIPS = (".json",)


class Format(StrEnum):
    text = "text"
    md = "md"
    json = "json"
    html = "html"
    sarif = "sarif"


@dataclass(frozen=True)
class _Source:
    label: str
    path: Path | None  # None: stdin, or the URL
    url: str | None = None


def _label(path: Path) -> str:
    """The name a report gives a file: relative to the working folder when inside it (what a
    code-scanning upload needs), else the file's name only (no local path in a report)."""
    try:
        relative = path.absolute().relative_to(Path.cwd())
    except ValueError:
        return public_path(str(path))
    return relative.as_posix()


def expand_inputs(names: list[str]) -> list[_Source]:
    """Files as given, folders as their document files (sorted), ``-`` as stdin."""
    from audit.references.inputs import EXTENSIONS
    from pipeline.check_online.fetch import is_url, url_label

    sources: list[_Source] = []
    for name in names:
        if is_url(name):
            sources.append(_Source(url_label(name), None, name))
            continue
        if name == "-":
            if any(s.label == "-" for s in sources):
                raise InputError("stdin ('-') can be given only once")
            sources.append(_Source("-", None))
            continue
        path = Path(name)
        if path.is_dir():
            wanted = {e for e in EXTENSIONS if e not in FOLDER_SKIPS}
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in wanted
                and not any(part.startswith(".") for part in p.relative_to(path).parts[:-1])
            )
            if not found:
                raise InputError(f"{path} holds no documents ({', '.join(sorted(wanted))} files)")
            sources.extend(_Source(_label(p), p) for p in found)
        elif path.is_file():
            sources.append(_Source(_label(path), path))
        else:
            raise InputError(f"{path}: no such file or directory")
    return sources


def _read(source: _Source, fmt: str | None, settings: Settings) -> ExtractedDocument:
    from audit.errors import DocumentError
    from audit.references import extract_bytes
    from audit.references.inputs import MAX_INPUT_BYTES

    if source.url is not None:
        from pipeline.check_online.fetch import fetch_document, format_of

        body, content_type = fetch_document(source.url, settings)
        return extract_bytes(body, source.label, format_of(source.url, content_type, fmt))
    if source.path is None:
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        try:
            with source.path.open("rb") as stream:
                data = stream.read(MAX_INPUT_BYTES + 1)
        except OSError as error:
            raise DocumentError(f"{source.label}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise LimitExceeded(f"{source.label}: over the limit of {MAX_INPUT_BYTES} bytes")
    return extract_bytes(data, source.label, fmt)


def parse_fail_on(values: list[str]) -> list[str]:
    """``--fail-on`` values (repeatable, comma-separated): tiers and flags."""
    from audit.references.check import FLAGS, TIERS

    known = (*TIERS, *FLAGS)
    items = [p.strip() for value in values for p in value.split(",") if p.strip()]
    for item in items:
        if item not in known:
            raise InputError(
                f"--fail-on: unknown item {item!r}, expected one of {', '.join(known)}"
            )
    return items


def render(report: CheckReport, fmt: Format) -> str:
    if fmt is Format.json:
        return report.model_dump_json(indent=2) + "\n"
    if fmt is Format.sarif:
        from audit.references.sarif import render_sarif

        return render_sarif(report, __version__)
    if fmt is Format.md:
        from audit.references.render_md import render_markdown

        return render_markdown(report)
    if fmt is Format.html:
        from audit.references.render_html import render_check_html
        from audit.terminal import html_text

        return html_text(render_check_html(report))  # bidi/control characters as references
    from audit.references.check import render_text

    return render_text(report)


def check_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="Documents (Markdown, text, HTML, BibTeX, RIS, CSL-JSON, PDF), folders of "
            "them, or - for stdin.",
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
            "--out", "-o", help="Write the report to this file instead of stdout.", dir_okay=False
        ),
    ] = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--input-format",
            help="Read every input in this format (markdown, text, html, bibtex, ris, "
            "csl-json, pdf); needed for stdin.",
        ),
    ] = None,
    fail_on_fabrication: Annotated[
        bool,
        typer.Option("--fail-on-fabrication", help="Exit 1 when any reference is hallucinated."),
    ] = False,
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when any reference has this tier or flag (verified, mismatch, "
            "hallucinated, needs_review, unresolved, retracted, expression_of_concern, "
            "preprint). Repeatable or comma-separated.",
            metavar="ITEM",
        ),
    ] = None,
    demo_key: DemoKeyOpt = False,
    online: Annotated[
        bool,
        typer.Option(
            "--online",
            help="Look up what the snapshot cannot place (Crossref, OpenAlex, PubMed, Europe "
            "PMC, arXiv, ClinicalTrials.gov) and keep it in a lookup snapshot.",
        ),
    ] = False,
    mailto: Annotated[
        str | None,
        typer.Option(
            "--mailto",
            help="Contact e-mail for the registries' polite pools (with --online; instead of "
            "CITESEAL_EMAIL). Never written to the report, logs or snapshots.",
            metavar="EMAIL",
        ),
    ] = None,
    lookup: Annotated[
        Path | None,
        typer.Option(
            "--lookup",
            help="Re-run offline with the lookup snapshot an online check wrote.",
            dir_okay=False,
            metavar="FILE",
        ),
    ] = None,
    lookup_dir: Annotated[
        Path | None,
        typer.Option(
            "--lookup-dir",
            help="Folder of the lookup snapshots (default: <snapshot name>-lookup beside the "
            "snapshot's corpus folder).",
            file_okay=False,
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """Check every reference of documents against a snapshot (exit 1 on --fail-on)."""
    from audit.references.check import SnapshotRef, check_document, failing, make_report
    from audit.references.inputs import format_for
    from audit.references.resolve import SnapshotResolver

    items = parse_fail_on(fail_on or []) + (["hallucinated"] if fail_on_fabrication else [])
    if input_format is not None:
        format_for("-", input_format)  # an unknown format: one line, before anything is read
    _check_online_options(online, mailto, lookup, lookup_dir)
    sources = expand_inputs(files)
    if any(s.label == "-" for s in sources) and input_format is None:
        raise InputError("reading stdin ('-') needs --input-format")
    settings = Settings.from_env()
    if mailto is not None:
        settings = dataclasses.replace(settings, email=mailto)
    policy = seal_policy(settings, demo_key)
    trusted = trusted_snapshot(snapshot, settings, policy)
    resolver = SnapshotResolver.open(trusted.path, trusted.manifest.name)
    try:
        trusted.still_unchanged()  # the file opened is the file checked
    except CiteSealError:
        resolver.close()
        raise
    bad = 0
    documents = []
    chain = None
    try:
        for source in sources:
            try:
                documents.append(_read(source, input_format, settings))
            except CiteSealError as error:
                bad += 1
                message = one_line(error.message)
                prefix = "" if message.startswith(source.label) else f"{source.label}: "
                typer.echo(f"error: {one_line(prefix)}{message}", err=True)
        chain = _chain(
            resolver, trusted, policy, settings, demo_key, online, lookup, lookup_dir, documents
        )
        checked = [
            check_document(document, chain.resolver if chain else resolver)
            for document in documents
        ]
    finally:
        if chain is not None:
            chain.close()
        resolver.close()
    ref = SnapshotRef(
        name=trusted.manifest.name, sha256=trusted.sha256, snapshot_id=trusted.manifest.snapshot_id
    )
    report = make_report(
        checked,
        ref,
        f"citeseal {__version__}",
        online=online,
        lookup=chain.lookup if chain else None,
    )
    text = render(report, fmt)
    if out is not None:
        try:
            write_atomic(out, text)
        except OSError as error:
            raise InputError(f"cannot write {out}: {error.strerror or error}") from None
    else:
        typer.echo(text, nl=False)
    if bad:
        raise typer.Exit(2)
    if items and failing(report, items):
        raise typer.Exit(1)


def _check_online_options(
    online: bool, mailto: str | None, lookup: Path | None, lookup_dir: Path | None
) -> None:
    from pipeline.settings import EMAIL

    if online and lookup is not None:
        raise InputError(
            "--online and --lookup cannot be combined: --lookup re-runs an online check offline"
        )
    if not online and (mailto is not None or lookup_dir is not None):
        raise InputError(f"{'--mailto' if mailto is not None else '--lookup-dir'} needs --online")
    if mailto is not None and not EMAIL.fullmatch(mailto):
        raise InputError("--mailto: expected an e-mail address (name@host.domain)")


def _chain(
    resolver: SnapshotResolver,
    trusted: TrustedSnapshot,
    policy: SealPolicy,
    settings: Settings,
    demo_key: bool,
    online: bool,
    lookup: Path | None,
    lookup_dir: Path | None,
    documents: list[ExtractedDocument],
) -> Online | None:
    """The online chain (``--online``), the re-run's (``--lookup``), or None (offline)."""
    from pipeline.check_online import go_online, with_lookup
    from pipeline.check_online.lookup import lookup_name

    if lookup is not None:
        return with_lookup(resolver, lookup, policy, digest_cache(settings), _label)
    if not online:
        return None
    keyring = installation_keyring(settings)
    if keyring is None and (demo_key or settings.demo_key):
        keyring = Keyring.demo_keyring()
    if keyring is None:
        raise InputError(
            "--online seals its lookup snapshot with this installation's key, and none is "
            "configured",
            advice="set CITESEAL_KEY or CITESEAL_KEY_FILE (citeseal key --help)",
        )
    folder = lookup_dir or trusted.path.parent.parent / lookup_name(trusted.manifest.name)
    done = go_online(
        documents,
        resolver,
        folder=folder,
        keyring=keyring,
        policy=policy,
        digests=digest_cache(settings),
        settings=settings,
        shown=_label,
    )
    if done.failure is not None:
        typer.echo(
            f"note: nothing was fetched online ({one_line(done.failure)}); every reference "
            "looked up online is unresolved",
            err=True,
        )
    elif done.lookup is not None:
        typer.echo(
            f"note: lookup snapshot {done.lookup.path} written; re-run offline with "
            f"--lookup {done.lookup.path}",
            err=True,
        )
    return done


def register(app: typer.Typer) -> None:
    """Attach ``citeseal check`` to the root app."""
    app.command("check")(check_command)
