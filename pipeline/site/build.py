"""``citeseal site build``: load and check everything, then render, then swap the folder in.

Phase one (:func:`load_site`) reads every report and snapshot, links reports to their
snapshots, computes the diff of each consecutive pair of snapshots and re-audits every report
against the newest snapshot of its lineage; anything wrong in an input stops the build here
with one line, and anything questionable becomes a warning (``--strict`` stops on those too).
Phase two (:func:`pipeline.site.pages.render_pages`) is pure: data in, ``{path: html}`` out;
then no page may show a local folder (:mod:`pipeline.site.local_paths`: removed, and a warning).
What a report page (and the report's JSON beside it) shows of each cited passage is the
build's publishing mode (``--publish``, :mod:`audit.publish`): by default the full passage
only where the record's licence allows it, else an excerpt with a link to the source.
Phase three writes the pages into a temporary folder beside ``--out`` and swaps it into place
atomically (:mod:`pipeline.site.swap`), so a failed or killed build leaves the previous site
complete, and the next build removes what a killed one left.

Reproducible: no clock is read (the build date is ``SOURCE_DATE_EPOCH``, else the newest date
found in the inputs), every list has a stable order, so two builds give identical bytes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from audit.errors import InputError
from audit.keys import Keyring
from audit.publish import DEFAULT_MODE, PublishMode
from audit.render_html import STATIC_DIR, TEMPLATES_DIR, make_environment
from pipeline.settings import source_date_epoch
from pipeline.site.diffs import SnapshotDiff, diff_snapshots
from pipeline.site.lineage import Lineage
from pipeline.site.loaders import BuildWarning, LoadedReport, load_reports
from pipeline.site.local_paths import default_roots, scrub_local_paths
from pipeline.site.pages import render_pages
from pipeline.site.reaudit_run import ReauditOutcome, reaudit_all
from pipeline.site.snapshots import LoadedSnapshot, load_snapshots
from pipeline.site.swap import exclusive, recover, replace_folder, staging_prefix
from pipeline.snapshot.digests import DigestCache
from pipeline.snapshot.trust import SealPolicy

MARKER = ".citeseal-site"
MARKER_TEXT = "Built by `citeseal site build`; this folder is replaced as a whole on every build.\n"
STATIC_FILES = ("site.css", "favicon.svg")


@dataclass(frozen=True)
class SiteData:
    """Everything phase one found: the only input of the render phase."""

    reports: tuple[LoadedReport, ...]
    lineage: Lineage
    report_snapshots: dict[str, LoadedSnapshot | None]  # report slug → its snapshot, if present
    diffs: tuple[SnapshotDiff, ...]
    reaudits: dict[str, ReauditOutcome]  # report slug → outcome
    build_date: str | None
    warnings: tuple[BuildWarning, ...] = field(default=())
    archive: str | None = None  # OWNER/REPO of the GitHub Releases archive: download links
    publish: PublishMode = DEFAULT_MODE  # what report pages show of passages (audit.publish)


@dataclass(frozen=True)
class BuildResult:
    out: Path
    pages: int
    reports: int
    snapshots: int
    warnings: tuple[BuildWarning, ...]
    changed_citations: int = 0  # citations whose status changed since publication (re-audit)


def build_date_from(env: Mapping[str, str], fallback: str | None) -> str | None:
    """``SOURCE_DATE_EPOCH`` as ISO 8601 UTC, else ``fallback`` (a date found in the inputs)."""
    moment = source_date_epoch(env)
    return fallback if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def load_site(
    reports_dir: Path,
    snapshots_dir: Path,
    *,
    keyring: Keyring | None = None,
    trust: SealPolicy | None = None,
    digests: DigestCache | None = None,
    archive: str | None = None,
    env: Mapping[str, str] | None = None,
    publish: PublishMode = DEFAULT_MODE,
) -> SiteData:
    """Phase one: read and check every input; raise on bad input, collect warnings.

    ``keyring`` re-checks the reports' check codes; ``trust`` says whose snapshot seals are
    accepted (default: ``keyring``'s). A snapshot that fails its checks stops the build.
    ``archive``: the ``OWNER/REPO`` whose releases hold the snapshots (their pages link there).
    ``publish``: how much of each cited passage the report pages and their JSON show
    (:mod:`audit.publish`: ``policy`` by licence, ``excerpt`` or ``full``).
    """
    env = os.environ if env is None else env
    reports, warnings = load_reports(reports_dir)
    snapshots, snapshot_warnings = load_snapshots(
        snapshots_dir, trust or SealPolicy.of(keyring), digests
    )
    warnings.extend(snapshot_warnings)
    lineage = Lineage.of(snapshots)
    report_snapshots: dict[str, LoadedSnapshot | None] = {}
    for loaded in reports:
        info = loaded.report.snapshot
        found = lineage.find(info.sha256)
        report_snapshots[loaded.slug] = found
        if found is None:
            warnings.append(
                BuildWarning(
                    loaded.name,
                    f"its snapshot {info.name} (sha256 {info.sha256[:12]}…) is not among "
                    f"the snapshots in {snapshots_dir}",
                )
            )
    diffs = tuple(diff_snapshots(old, new) for old, new in lineage.pairs())
    reaudits, reaudit_warnings = reaudit_all(reports, lineage, report_snapshots, keyring=keyring)
    warnings.extend(reaudit_warnings)
    dates = [r.report.created_at for r in reports] + [s.created_at for s in snapshots]
    fallback = max((d for d in dates if d), default=None)
    return SiteData(
        reports=tuple(reports),
        lineage=lineage,
        report_snapshots=report_snapshots,
        diffs=diffs,
        reaudits=reaudits,
        build_date=build_date_from(env, fallback),
        archive=archive,
        warnings=tuple(warnings),
        publish=publish,
    )


def build_site(
    reports_dir: Path,
    snapshots_dir: Path,
    out: Path,
    *,
    strict: bool = False,
    keyring: Keyring | None = None,
    trust: SealPolicy | None = None,
    digests: DigestCache | None = None,
    archive: str | None = None,
    env: Mapping[str, str] | None = None,
    templates: Path | None = None,
    static: Path | None = None,
    on_warning: Callable[[BuildWarning], None] | None = None,
    publish: PublishMode = DEFAULT_MODE,
) -> BuildResult:
    """Build the whole site into ``out`` (replaced atomically); see the module docstring.

    ``on_warning`` sees each warning once the pages are rendered and checked for local paths
    (before ``strict`` decides and before anything is written).
    """
    _check_out(out, reports_dir, snapshots_dir)
    data = load_site(
        reports_dir,
        snapshots_dir,
        keyring=keyring,
        trust=trust,
        digests=digests,
        archive=archive,
        env=env,
        publish=publish,
    )
    pages = render_pages(data, make_environment(templates or TEMPLATES_DIR))
    pages, scrubbed = scrub_local_paths(
        pages, default_roots(reports_dir, snapshots_dir, out.parent)
    )
    warnings = (*data.warnings, *scrubbed)
    if on_warning is not None:
        for warning in warnings:
            on_warning(warning)
    if strict and warnings:
        count = len(warnings)
        raise InputError(
            f"{count} warning{'s' if count > 1 else ''} and --strict: {warnings[0].line()}",
            advice="fix the inputs, or build without --strict",
        )
    write_site(pages, out, static or STATIC_DIR)
    return BuildResult(
        out=out,
        pages=sum(1 for path in pages if path.endswith(".html")),
        reports=len(data.reports),
        snapshots=len(data.lineage.snapshots),
        warnings=warnings,
        changed_citations=sum(len(o.changes) for o in data.reaudits.values()),
    )


def _check_out(out: Path, *inputs: Path) -> None:
    if out.is_symlink():  # swapping it would move the link, not the site it points to
        raise InputError(
            f"--out {out} is a symbolic link",
            advice=f"give the folder it points to: --out {out.resolve()}",
        )
    target = out.resolve()
    for folder in inputs:
        source = folder.resolve()
        if target == source or target in source.parents or source in target.parents:
            raise InputError(f"--out {out} overlaps the input folder {folder}")
    if target.exists() and not target.is_dir():
        raise InputError(f"--out {out} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).is_file():
        raise InputError(
            f"refusing to replace {out}: it is not a site built by citeseal (no {MARKER} file)",
            advice="choose an empty or new folder for --out",
        )


def write_site(pages: Mapping[str, str], out: Path, static: Path) -> None:
    """Write the pages and static files beside ``out``, then swap the new folder in
    (:mod:`pipeline.site.swap`: atomic, one build at a time, leftovers of killed builds
    cleaned up first)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(out.parent):
        recover(out)
        staging = Path(tempfile.mkdtemp(prefix=staging_prefix(out), dir=out.parent))
        try:
            write_staging(pages, staging, static)
            replace_folder(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def write_staging(pages: Mapping[str, str], staging: Path, static: Path) -> None:
    """Every page, the static files and the marker, readable by all (a complete site)."""
    for relative, html in sorted(pages.items()):
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8", newline="\n")
    (staging / "static").mkdir(exist_ok=True)
    for name in STATIC_FILES:
        shutil.copyfile(static / name, staging / "static" / name)
    (staging / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
    for path in [staging, *staging.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
