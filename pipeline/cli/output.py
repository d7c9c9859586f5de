"""Everything the CLI prints passes through the one terminal sanitiser.

:func:`safe_streams` (entered by :func:`pipeline.cli.main` around every command) replaces
standard output and error with :class:`SafeStream` wrappers, so every line — a command's own
output, JSON, a report, an ``error:`` line, a warning, Typer's usage errors, a ``--verbose``
traceback — reaches the terminal with its unsafe characters escaped
(:func:`audit.terminal.terminal_lines`; the policy is in :mod:`audit.terminal`). JSON stays
valid and equal (the escapes are JSON's own). Where a command composes a line from untrusted
pieces that may hold a line break (a title, a file name), it passes them through
:func:`audit.terminal.one_line` first, so they cannot forge a line of output either.

A progress display that draws with escape sequences of its own writes to :func:`raw` (the
stream underneath); it must show nothing but citeseal's own words and numbers.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TextIO

from audit.terminal import terminal_lines


class SafeStream:
    """A text stream that writes through :func:`audit.terminal.terminal_lines`.

    It has no ``buffer``: bytes cannot go around it (Typer then writes text to it).
    """

    def __init__(self, stream: TextIO) -> None:
        self.raw = stream

    def write(self, text: str) -> int:
        self.raw.write(terminal_lines(text))
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self.raw, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:
        return getattr(self.raw, "errors", None) or "strict"

    @property
    def closed(self) -> bool:
        return self.raw.closed


def raw(stream: TextIO) -> TextIO:
    """The stream under a :class:`SafeStream` (the stream itself otherwise)."""
    return stream.raw if isinstance(stream, SafeStream) else stream


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """Standard output and error wrapped in :class:`SafeStream` for the duration.

    They are put back when the block ends or exits (``SystemExit``); an unexpected exception
    (a bug) leaves them in place, so the traceback Python prints goes through them too.
    """
    saved = sys.stdout, sys.stderr
    sys.stdout = SafeStream(raw(sys.stdout))  # type: ignore[assignment]
    sys.stderr = SafeStream(raw(sys.stderr))  # type: ignore[assignment]
    try:
        yield
    except SystemExit:
        sys.stdout, sys.stderr = saved
        raise
    sys.stdout, sys.stderr = saved
