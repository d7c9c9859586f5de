"""The last check before pages are written: no page shows where this machine keeps its files.

Report fields that name files are public names already (:mod:`audit.paths`; the loader
applies the rule to older reports too). Free text can still carry a local path — a harvest
failure recorded in a snapshot (``no recorded exchange … in /home/me/replay``), a manifest's
failed request, an answer that quotes one. So every rendered page is searched for the
absolute forms of the folders this build knows — the working folder, the home folder, the
``--reports`` and ``--snapshots`` folders and the folder that holds ``--out`` (each as given
and with symbolic links resolved; the filesystem root itself is never one) — and each
occurrence is replaced by ``…``, keeping what follows (``…/replay``). Each folder removed is a
:class:`~pipeline.site.loaders.BuildWarning` (``--strict`` fails on it): the input that held
it should be fixed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from markupsafe import escape

from pipeline.site.loaders import BuildWarning

ELIDED = "…"
# a folder name ends where the path goes on ("/"), or at text that cannot continue a name
_END = r"(?=[/\\\s\"'<>&),;:\]|]|$)"


def local_roots(folders: Iterable[Path]) -> tuple[str, ...]:
    """The absolute spellings of ``folders`` (as given and resolved), longest first."""
    roots: set[str] = set()
    for folder in folders:
        for form in (folder.absolute(), folder.resolve()):
            if len(form.parts) > 1:  # never the filesystem root
                roots.add(str(form))
    return tuple(sorted(roots, key=lambda root: (-len(root), root)))


def default_roots(*folders: Path) -> tuple[str, ...]:
    """The folders of a build: ``folders`` plus the working and the home folder."""
    return local_roots([*folders, Path.cwd(), Path.home()])


def scrub_local_paths(
    pages: Mapping[str, str], roots: Iterable[str]
) -> tuple[dict[str, str], list[BuildWarning]]:
    """``pages`` with every local folder of ``roots`` replaced by ``…``, and one warning per
    folder found (naming the pages it was found on)."""
    patterns: list[tuple[str, re.Pattern[str]]] = []
    for root in roots:
        forms = sorted({root, str(escape(root))}, key=len, reverse=True)
        patterns.append((root, re.compile("|".join(re.escape(f) for f in forms) + _END)))
    found: dict[str, list[str]] = {}
    clean: dict[str, str] = {}
    for name, html in pages.items():
        for root, pattern in patterns:
            html, count = pattern.subn(ELIDED, html)
            if count:
                found.setdefault(root, []).append(name)
        clean[name] = html
    warnings = [
        BuildWarning(
            ", ".join(sorted(names)[:3])
            + (f" and {len(names) - 3} more" if len(names) > 3 else ""),
            f"a local path ({root}) was removed from the page; fix the input that holds it",
        )
        for root, names in sorted(found.items())
    ]
    return clean, warnings
