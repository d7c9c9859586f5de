"""Phase one of the site build, for reports: find, parse and check every report JSON file.

A report that does not parse stops the build with one line that names the file; problems that
leave a usable site (duplicate names, a report whose snapshot is not among ``--snapshots``)
are :class:`Warning` values that ``--strict`` turns into a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from audit.errors import InputError
from audit.paths import public_report
from audit.report import Report


@dataclass(frozen=True)
class BuildWarning:
    """Something the build can render around, but ``--strict`` refuses."""

    subject: str
    message: str

    def line(self) -> str:
        return f"{self.subject}: {self.message}"


@dataclass(frozen=True)
class LoadedReport:
    path: Path  # the file it was read from
    name: str  # its path relative to the reports folder, for people
    slug: str  # unique, [a-z0-9-], the page is reports/<slug>.html
    report: Report


_SLUG_JUNK = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, fallback: str = "item") -> str:
    """Lower-case ASCII letters, digits and single hyphens (a safe, portable file name)."""
    slug = _SLUG_JUNK.sub("-", text.lower()).strip("-")
    return slug[:80].rstrip("-") or fallback


def parse_report(path: Path, data: bytes, *, name: str | None = None) -> Report:
    """One report from its JSON bytes; a bad file is an :class:`InputError` naming it."""
    shown = name or str(path)
    try:
        return Report.model_validate_json(data)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        reason = " ".join(str(first["msg"]).split())
        if first["type"] == "json_invalid":
            problem = f"not valid JSON ({reason})"
        else:
            problem = f"{where}: {reason}" if where else reason
        more = error.error_count() - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise InputError(
            f"malformed report {shown}: {problem}{suffix}",
            advice="a report is the JSON that `citeseal audit --format json` writes",
        ) from None


def load_reports(folder: Path) -> tuple[list[LoadedReport], list[BuildWarning]]:
    """Every ``*.json`` under ``folder`` (recursively), in a stable order, with unique slugs."""
    if not folder.is_dir():
        raise InputError(f"reports folder not found: {folder}")
    loaded: list[LoadedReport] = []
    warnings: list[BuildWarning] = []
    taken: set[str] = set()
    for path in sorted(folder.rglob("*.json"), key=lambda p: p.relative_to(folder).as_posix()):
        if not path.is_file():
            continue
        name = path.relative_to(folder).as_posix()
        try:
            data = path.read_bytes()
        except OSError as error:
            raise InputError(f"cannot read report {name}: {error.strerror}") from None
        report = public_report(parse_report(path, data, name=name))  # no local path on a page
        base = slugify(name.removesuffix(".json"), fallback="report")
        slug, n = base, 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        if slug != base:
            warnings.append(BuildWarning(name, f"page name {base!r} already taken; using {slug!r}"))
        taken.add(slug)
        loaded.append(LoadedReport(path=path, name=name, slug=slug, report=report))
    if not loaded:
        warnings.append(BuildWarning(str(folder), "no report JSON files found"))
    return loaded, warnings
