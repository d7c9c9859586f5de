"""File names in reports: never an absolute local path.

A report is meant to be published (the site renders it, people share its JSON), so the fields
that name files — ``source`` (the audited input) and ``snapshot.path`` (the snapshot it was
audited against) — hold a *public name* (:func:`public_path`):

- a relative path that stays inside its folder (no ``..`` part) is kept as given;
- anything else — an absolute path (``/home/me/…``, ``C:\\…``, ``\\\\server\\…``), a path from
  the home folder (``~/…``), a path that climbs out (``../…``), a ``file:`` URL — is reduced
  to its last part, the file name.

With ``cwd``, an absolute path inside that folder is first made relative to it
(``$PWD/answers/a.md`` → ``answers/a.md``); the CLI passes the working folder, the engine
passes nothing. The audit engine applies the rule to every report it makes and the site to
every report it loads (:func:`public_report`, for reports made before the rule), so no report
field and no page title carries a local path.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from audit.report import Report

_SEPARATORS = re.compile(r"[\\/]+")
_DRIVE = re.compile(r"[A-Za-z]:")
_LEADING = re.compile(r"^(?:~|file:)+", re.IGNORECASE)  # what makes a name local again
UNNAMED = "(local file)"  # what is left of a path with no name in it (``/``, ``~``)


def _is_local(text: str) -> bool:
    """Whether ``text`` names a place on this machine outside a relative folder."""
    if text.startswith(("/", "\\", "~")) or text.lower().startswith("file:"):
        return True
    parts = _SEPARATORS.split(text)
    return _DRIVE.fullmatch(parts[0]) is not None or ".." in parts


def _inside(text: str, cwd: str) -> str | None:
    """``text`` relative to ``cwd`` when it is an absolute path inside it, else None."""
    try:
        inside = PurePath(text).relative_to(PurePath(cwd))
    except ValueError:
        return None
    relative = inside.as_posix()
    return None if relative in ("", ".") or ".." in inside.parts else relative


def public_path(text: str, *, cwd: str | None = None) -> str:
    """The name of a file as a report may show it (see the module docstring)."""
    if not _is_local(text):
        return text
    if cwd is not None and PurePath(text).is_absolute():
        relative = _inside(text, cwd)
        if relative is not None:
            return public_path(relative)
    parts = [part for part in _SEPARATORS.split(text) if part not in ("", ".", "..")]
    name = _LEADING.sub("", parts[-1]) if parts else ""
    if name in ("", ".", "..") or _DRIVE.fullmatch(name):
        return UNNAMED
    return name


def public_report(report: Report) -> Report:
    """``report`` with its file names made public (a no-op on reports made by this version)."""
    source = public_path(report.source)
    path = public_path(report.snapshot.path)
    if (source, path) == (report.source, report.snapshot.path):
        return report
    snapshot = report.snapshot.model_copy(update={"path": path})
    return report.model_copy(update={"source": source, "snapshot": snapshot})
