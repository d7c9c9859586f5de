"""Drift checks: the README documents every CLI command and leads with the two set-up commands."""

from __future__ import annotations

from pathlib import Path

import typer.main

from pipeline.cli import app

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def command_paths() -> list[str]:
    """Every leaf command of the CLI, as 'citeseal group command'."""
    root = typer.main.get_command(app)
    paths: list[str] = []

    def walk(command: object, prefix: str) -> None:
        children = getattr(command, "commands", None)
        if not children:
            paths.append(prefix)
            return
        for name, child in sorted(children.items()):
            walk(child, f"{prefix} {name}")

    walk(root, "citeseal")
    return paths


def test_every_command_is_in_the_readme_with_an_example() -> None:
    paths = command_paths()
    assert len(paths) >= 19  # key×3, handle×2, snapshot×7, parse, search, cite, audit, …
    missing = [path for path in paths if path not in README]
    assert missing == []


def test_every_command_has_help() -> None:
    root = typer.main.get_command(app)

    def walk(command: object, name: str) -> list[str]:
        children = getattr(command, "commands", None)
        if children:
            return [bad for key, child in children.items() for bad in walk(child, f"{name} {key}")]
        return [] if (getattr(command, "help", None) or "").strip() else [name]

    assert walk(root, "citeseal") == []


def test_readme_leads_with_the_two_setup_commands() -> None:
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]
    assert "make demo" in first_block
    assert "make test" in first_block
