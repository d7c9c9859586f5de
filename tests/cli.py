"""Run ``citeseal`` in this process, as a subprocess would, for tests that only read its output.

:func:`citeseal` calls the console script's :func:`pipeline.cli.main` (its single error
boundary and its terminal sanitiser included) with the given arguments, environment, working
folder and standard input, and returns a :class:`subprocess.CompletedProcess` like
``subprocess.run(..., capture_output=True, text=True)`` would. It saves the cost of starting
an interpreter and importing the CLI for each call, which is most of a CLI test's time.

Tests that prove something only a real process shows keep ``subprocess``: signals, a killed
build, the traceback of an unexpected error, the console script itself.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pipeline.cli import main


class _Stream(io.TextIOWrapper):
    """A text stream over bytes (so ``.buffer`` exists), never a terminal."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict", newline=None)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("utf-8", errors="replace")


@contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _folder(cwd: Path | str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    saved = Path.cwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


def citeseal(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``citeseal ARGS`` in-process: its exit code, standard output and standard error.

    ``env`` replaces the whole environment for the call (as ``subprocess.run(env=…)`` does);
    None keeps the current one.
    """
    out, err, stdin = _Stream(), _Stream(), _Stream((input or "").encode("utf-8"))
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr
    code = 0
    sys.argv = ["citeseal", *args]
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        with _environment(env), _folder(cwd):
            main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess(["citeseal", *args], code, out.text(), err.text())
