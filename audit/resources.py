"""Where citeseal's data files are at run time: a source checkout first, else the installed wheel.

The files (site templates, static assets, the demo corpus, the report schema) live at fixed
places in the repository (``site/templates``, ``site/static``, ``snapshots/demo.toml`` with
``snapshots/demo/replay`` and ``replay-update``, ``audit/schemas``). The wheel carries the same
files inside the ``audit`` package, mapped by ``[tool.hatch.build.targets.wheel.force-include]``
in pyproject.toml::

    site/templates               -> audit/_resources/templates
    site/static                  -> audit/_resources/static
    snapshots/demo.toml          -> audit/_resources/demo/demo.toml
    snapshots/demo/replay        -> audit/_resources/demo/replay
    snapshots/demo/replay-update -> audit/_resources/demo/replay-update
    audit/schemas                   (already inside the package)

Rules:

- One answer for every file: :func:`resources` decides the layout once. A checkout is the
  folder holding the ``audit`` package when it also holds ``pyproject.toml`` and
  ``site/templates`` (an editable install counts: its files are the checkout's); otherwise the
  packaged copies under ``audit/_resources`` are used, found through :mod:`importlib.resources`.
  Layouts are never mixed, so a half-installed checkout cannot lend a wheel its templates.
- Nothing here checks that a file exists: the callers say which file is missing, in their own
  error (``TemplatesMissingError``, the demo's ``InputError``), so a broken install fails with
  a one-line message, never a silent fallback.
- The packaged files must be on the file system (Jinja's loader, ``shutil.copytree`` and
  DuckDB need real paths). Every installer unpacks wheels; under an import from a zip archive
  the paths name the archive's members, do not exist, and the callers' errors name them.
  Nothing is raised at import time.
- It lives in :mod:`audit` because the report page's templates are needed there and
  :mod:`audit` never imports :mod:`pipeline`; it uses the standard library only.
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGED = "_resources"
"""The folder inside the ``audit`` package that holds the wheel's copies."""


@dataclass(frozen=True)
class Resources:
    """Every data file citeseal reads at run time, in one layout."""

    checkout: bool
    """True in a source checkout (or an editable install of one), False in an installed wheel."""
    templates: Path
    static: Path
    demo_spec: Path
    demo_replay: Path
    demo_replay_update: Path
    report_schema: Path

    @property
    def demo_out(self) -> Path:
        """The demo's default working folder: ``site/demo`` in a checkout, ``./citeseal-demo``
        (relative to where it runs) otherwise, never inside the installed package."""
        return self.templates.parent / "demo" if self.checkout else Path("citeseal-demo")


def checkout_resources(root: Path) -> Resources:
    """The layout of a source checkout whose top folder is ``root``."""
    return Resources(
        checkout=True,
        templates=root / "site" / "templates",
        static=root / "site" / "static",
        demo_spec=root / "snapshots" / "demo.toml",
        demo_replay=root / "snapshots" / "demo" / "replay",
        demo_replay_update=root / "snapshots" / "demo" / "replay-update",
        report_schema=root / "audit" / "schemas" / "report.schema.json",
    )


def packaged_resources(package: Path) -> Resources:
    """The layout of an installed wheel whose ``audit`` package folder is ``package``."""
    data = package / PACKAGED
    return Resources(
        checkout=False,
        templates=data / "templates",
        static=data / "static",
        demo_spec=data / "demo" / "demo.toml",
        demo_replay=data / "demo" / "replay",
        demo_replay_update=data / "demo" / "replay-update",
        report_schema=package / "schemas" / "report.schema.json",
    )


def is_checkout(root: Path) -> bool:
    """Whether ``root`` (the folder holding the ``audit`` package) is a source checkout."""
    return (root / "pyproject.toml").is_file() and (root / "site" / "templates").is_dir()


def locate(package: Path) -> Resources:
    """The layout for an ``audit`` package folder: its checkout if it is in one, else packaged."""
    root = package.parent
    return checkout_resources(root) if is_checkout(root) else packaged_resources(package)


@cache
def resources() -> Resources:
    """The layout of this citeseal (decided once per process)."""
    package = importlib.resources.files("audit")
    return locate(package if isinstance(package, Path) else Path(str(package)))
