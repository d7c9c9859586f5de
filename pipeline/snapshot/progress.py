"""Progress of a build: Rich bars per source on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from audit.terminal import one_line


class NullProgress:
    """Shows nothing (library use, tests)."""

    def start(self, source: str, total: int | None) -> None:
        del source, total

    def advance(self, source: str, count: int) -> None:
        del source, count

    def finish(self, source: str, status: str) -> None:
        del source, status

    def note(self, message: str) -> None:
        del message


class LogProgress:
    """One line per event, at most one progress line per source every ``every`` seconds."""

    def __init__(
        self,
        write: Callable[[str], None] | None = None,
        *,
        every: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._every = every
        self._clock = clock
        self._done: dict[str, int] = {}
        self._total: dict[str, int | None] = {}
        self._last: dict[str, float] = {}

    def start(self, source: str, total: int | None) -> None:
        self._total[source] = total if total is not None else self._total.get(source)
        self._done.setdefault(source, 0)
        self._last[source] = self._clock()
        of = f" {total} records" if total is not None else ""
        self._write(f"{source}: harvesting{of}")

    def advance(self, source: str, count: int) -> None:
        self._done[source] = self._done.get(source, 0) + count
        now = self._clock()
        if now - self._last.setdefault(source, now) >= self._every:
            self._last[source] = now
            total = self._total.get(source)
            of = f"/{total}" if total is not None else ""
            self._write(f"{source}: {self._done[source]}{of} records")

    def finish(self, source: str, status: str) -> None:
        if source in self._done:
            self._write(f"{source}: {status}, {self._done[source]} records")
        else:  # an enrichment source (PubTator3, Crossref): no records of its own
            self._write(f"{source}: {status}")

    def note(self, message: str) -> None:
        self._write(message)


class RichProgress:
    """Rich progress bars, one per source; use as a context manager."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            # the bars draw with escape sequences: the stream under the CLI's sanitising
            # wrapper (pipeline.cli.output), which would escape them; notes are sanitised here
            console=Console(file=stream or getattr(sys.stderr, "raw", sys.stderr)),
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._done: dict[str, int] = {}

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def _task(self, source: str) -> TaskID:
        if source not in self._tasks:
            self._tasks[source] = self._progress.add_task(source, total=None, status="")
        return self._tasks[source]

    def start(self, source: str, total: int | None) -> None:
        task = self._task(source)
        if total is not None:
            self._progress.update(task, total=total)

    def advance(self, source: str, count: int) -> None:
        self._done[source] = self._done.get(source, 0) + count
        self._progress.advance(self._task(source), count)

    def finish(self, source: str, status: str) -> None:
        done = self._done.get(source, 0)
        self._progress.update(self._task(source), total=done, completed=done, status=status)

    def note(self, message: str) -> None:
        self._progress.console.print(one_line(message), markup=False, highlight=False)
