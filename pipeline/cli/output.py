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

A stream whose reader has gone (``citeseal audit DIR | head``) raises :class:`OutputClosed`
from the write or flush that found it, not the ``OSError`` Click would turn into a silent
exit 1 (which a script reads as "an audit failed"): :func:`pipeline.cli.main` says so in one
line and exits 141, the shell's code for a writer stopped by a closed pipe.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from audit.terminal import terminal_lines

PIPE_CLOSED_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a writer a closed pipe stopped


class OutputClosed(Exception):
    """The reader of standard output or error went away before the command finished."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


class SafeStream:
    """A text stream that writes through :func:`audit.terminal.terminal_lines`.

    It has no ``buffer``: bytes cannot go around it (Typer then writes text to it).
    """

    def __init__(self, stream: TextIO, name: str = "stdout") -> None:
        self.raw = stream
        self.name = name

    def write(self, text: str) -> int:
        try:
            self.raw.write(terminal_lines(text))
        except BrokenPipeError:
            raise OutputClosed(self.name) from None
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.raw.flush()
        except BrokenPipeError:
            raise OutputClosed(self.name) from None

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
    sys.stderr = SafeStream(raw(sys.stderr), "stderr")  # type: ignore[assignment]
    try:
        yield
    except SystemExit:
        sys.stdout, sys.stderr = saved
        raise
    sys.stdout, sys.stderr = saved


def stop_writing(closed: OutputClosed) -> None:
    """After :class:`OutputClosed`: point the closed stream at ``os.devnull`` (so the flush at
    exit cannot raise again), then say once, on standard error if it is still open, why the
    output stopped."""
    stream = raw(sys.stdout if closed.stream == "stdout" else sys.stderr)
    with contextlib.suppress(OSError, ValueError):  # a stream without a descriptor: nothing to do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    if closed.stream == "stdout":
        with contextlib.suppress(OSError, ValueError, OutputClosed):
            sys.stderr.write(
                "error: standard output was closed before citeseal finished writing "
                "(broken pipe); nothing more was written\n"
            )
            sys.stderr.flush()
