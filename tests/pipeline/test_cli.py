"""The CLI boundary: help, unknown commands, one-line errors."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from pipeline.cli import main; main()", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_help_lists_the_program() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    assert "Usage: citeseal" in done.stdout or "Usage: -c" in done.stdout


def test_unknown_command_is_a_usage_error_without_traceback() -> None:
    done = run_cli("no-such-command")
    assert done.returncode == 2
    assert "No such command" in done.stderr
    assert "Traceback" not in done.stderr
