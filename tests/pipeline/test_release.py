"""The release's checks (pipeline/release.py): the tag names the version everything already
says, and server.json is what the MCP Registry takes; each problem is one exact line."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

import audit
from pipeline import release

ROOT = Path(__file__).resolve().parent.parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SERVER: dict[str, Any] = {
    "$schema": release.SERVER_SCHEMA,
    "name": "io.github.someone/citeseal",
    "description": "Cite by signed handle.",
    "version": "0.1.0",
    "packages": [
        {
            "registryType": "pypi",
            "identifier": "citeseal",
            "version": "0.1.0",
            "transport": {"type": "stdio"},
        }
    ],
}
README = "# citeseal\n<!-- mcp-name: io.github.someone/citeseal -->\n"


def problems(tag: str = "v0.1.0", readme: str = README, **changes: Any) -> list[str]:
    server = copy.deepcopy(SERVER)
    server.update(changes)
    project = {"name": "citeseal", "version": "0.1.0"}
    return release.release_problems(
        tag, project=project, package_version="0.1.0", server=server, readme=readme
    )


@pytest.mark.parametrize(
    ("tag", "version"),
    [("v0.1.0", "0.1.0"), ("v1.2.0rc1", "1.2.0rc1"), ("v2.0.0.post1", "2.0.0.post1")],
)
def test_a_version_tag_names_its_version(tag: str, version: str) -> None:
    assert release.tag_version(tag) == version


@pytest.mark.parametrize("tag", ["0.1.0", "v0.1", "v0.1.0-beta", "release-0.1.0", "v0.1.0\n"])
def test_anything_else_names_no_version(tag: str) -> None:
    assert release.tag_version(tag) is None
    assert problems(tag) == [f"tag {tag!r} names no version (expected v + a version, e.g. v0.1.0)"]


def test_a_consistent_release_has_no_problem() -> None:
    assert problems() == []


def test_a_tag_that_differs_from_the_code_stops_the_release_naming_every_place() -> None:
    assert problems("v0.2.0") == [
        "pyproject.toml says '0.1.0', the tag v0.2.0 says '0.2.0'",
        "audit.__version__ says '0.1.0', the tag v0.2.0 says '0.2.0'",
        "server.json version says '0.1.0', the tag v0.2.0 says '0.2.0'",
        "server.json package version says '0.1.0', the tag v0.2.0 says '0.2.0'",
    ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"$schema": "https://example.org/s.json"},
            "server.json: $schema is 'https://example.org/s.json', "
            f"expected {release.SERVER_SCHEMA!r}",
        ),
        (
            {"description": "x" * 101},
            "server.json: description must be 1 to 100 characters, got 101",
        ),
        (
            {"packages": [{**SERVER["packages"][0], "identifier": "other"}]},
            "server.json: the package is 'other', expected 'citeseal'",
        ),
        (
            {"packages": [{**SERVER["packages"][0], "transport": {"type": "sse"}}]},
            "server.json: the transport is {'type': 'sse'}, expected {'type': 'stdio'}",
        ),
        (
            {"packages": []},
            "server.json: packages must be one package with registryType 'pypi'",
        ),
    ],
    ids=["schema", "description", "package", "transport", "no-package"],
)
def test_a_server_json_the_registry_would_refuse_stops_the_release(
    changes: dict[str, Any], expected: str
) -> None:
    found = problems(**changes)
    assert expected in found
    assert all(p == expected or "package version" in p for p in found)


def test_the_owner_placeholder_and_the_readme_marker_are_checked() -> None:
    assert problems(name="io.github.OWNER/citeseal", readme=README.replace("someone", "OWNER")) == [
        "server.json: name 'io.github.OWNER/citeseal' still holds the placeholder OWNER"
    ]
    assert problems(readme="# citeseal\n") == [
        "README.md: mcp-name markers [], expected exactly ['io.github.someone/citeseal']"
    ]
    assert problems(name="citeseal") == [
        "server.json: name 'citeseal' is not NAMESPACE/NAME (e.g. io.github.owner/citeseal)",
        "README.md: mcp-name markers ['io.github.someone/citeseal'], expected exactly ['citeseal']",
    ]


def test_the_checkout_is_release_ready_but_for_the_repository_owner() -> None:
    """The committed files agree with each other; the release stops, and says so, until
    server.json and the README name the GitHub owner the registry will verify."""
    server = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    assert PROJECT["version"] == audit.__version__ == server["version"]
    assert release.check(f"v{PROJECT['version']}", ROOT) == [
        "server.json: name 'io.github.OWNER/citeseal' still holds the placeholder OWNER"
    ]


def test_the_cli_prints_one_error_line_per_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert release.main(["check", "--tag", "v9.9.9"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: pyproject.toml says '0.1.0', the tag v9.9.9 says '9.9.9'"
    assert all(line.startswith("error: ") for line in err)
    assert release.main(["nonsense"]) == 2
    assert capsys.readouterr().err == (
        "usage: python -m pipeline.release check --tag vX.Y.Z | smoke DIST\n"
    )


def test_smoke_refuses_a_dist_folder_without_both_distributions(tmp_path: Path) -> None:
    (tmp_path / "citeseal-0.1.0-py3-none-any.whl").write_bytes(b"")
    with pytest.raises(SystemExit) as stopped:
        release.smoke(tmp_path)
    assert str(stopped.value) == (
        f"error: {tmp_path} must hold one sdist and one wheel, found "
        "['citeseal-0.1.0-py3-none-any.whl']"
    )
