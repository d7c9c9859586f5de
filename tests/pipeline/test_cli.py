"""The CLI boundary: help, unknown commands, one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
    assert "Usage: citeseal" in done.stdout


def test_unknown_command_is_a_usage_error_without_traceback() -> None:
    done = run_cli("no-such-command")
    assert done.returncode == 2
    assert done.stderr == "error: No such command 'no-such-command'.\nhint: see citeseal --help\n"


def test_a_bad_option_value_is_one_error_line_and_a_hint_not_a_usage_block() -> None:
    done = run_cli("audit", "answer.md", "--format", "pdf")
    assert done.returncode == 2
    assert done.stderr == (
        "error: Invalid value for '--format' / '-f': 'pdf' is not one of 'text', 'json', "
        "'md', 'html'.\nhint: see citeseal audit --help\n"
    )


def test_a_blank_citeseal_key_means_no_key_in_every_command(tmp_path: Path) -> None:
    from pipeline.cli.common import installation_keyring
    from pipeline.settings import Settings

    settings = Settings(data_dir=tmp_path)
    assert installation_keyring(settings, {"CITESEAL_KEY": "  "}) is None
    key = "ab" * 32
    keyring = installation_keyring(settings, {"CITESEAL_KEY": key})
    assert keyring is not None and not keyring.demo
