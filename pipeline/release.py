"""The release's checks, run by ``.github/workflows/release.yml`` and runnable locally.

    python -m pipeline.release check --tag v0.1.0     the tag, the versions, server.json
    python -m pipeline.release smoke DIST              sdist and wheel in clean venvs

Rules (:func:`release_problems`, pure; every rule says what it saw and what it expected):

- The tag is ``v`` + the version (``v0.1.0``, ``v1.2.0rc1``): the version is the tag's. The
  release never rewrites a version: ``pyproject.toml``, ``audit.__version__`` and
  ``server.json`` (its own and its PyPI package's) must all already say the tag's version,
  so the tagged commit's source is exactly what is published.
- ``server.json`` is what the MCP Registry takes: ``$schema`` the registry's schema, ``name``
  ``io.github.<owner>/citeseal`` (one slash, reverse-DNS namespace) and not the ``OWNER``
  placeholder, a description of at most 100 characters, one PyPI package named as the project
  with the stdio transport; the README carries the ``mcp-name:`` marker with that name (the
  registry proves PyPI ownership by finding it in the published README).

A release with any problem stops before anything is built or published (exit 1, one
``error:`` line per problem). :func:`smoke` builds nothing: it installs the built sdist and
wheel each into a fresh venv outside the checkout and runs ``citeseal --help`` and
``citeseal demo`` there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
MAX_DESCRIPTION = 100
PLACEHOLDER_OWNER = "OWNER"
_TAG = re.compile(r"v(?P<version>\d+(?:\.\d+){2}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)")
_NAME = re.compile(r"(?P<namespace>[a-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/(?P<server>[A-Za-z0-9._-]+)")
_MARKER = re.compile(r"mcp-name:\s*(\S+)")
DEMO_FAIL = "verdict: FAIL  (6 citations: 1 malformed, 1 forged, 1 quote_mismatch, 3 ok)"


def tag_version(tag: str) -> str | None:
    """The version a release tag names (``v0.1.0`` → ``0.1.0``), None when it names none."""
    found = _TAG.fullmatch(tag)
    return found["version"] if found else None


def server_problems(server: Mapping[str, Any], project: str, readme: str) -> list[str]:
    """What keeps ``server.json`` from being published to the MCP Registry."""
    problems = []
    if server.get("$schema") != SERVER_SCHEMA:
        problems.append(
            f"server.json: $schema is {server.get('$schema')!r}, expected {SERVER_SCHEMA!r}"
        )
    name = server.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        problems.append(
            f"server.json: name {name!r} is not NAMESPACE/NAME (e.g. io.github.owner/{project})"
        )
    elif PLACEHOLDER_OWNER in name.split("/")[0].split("."):
        problems.append(
            f"server.json: name {name!r} still holds the placeholder {PLACEHOLDER_OWNER}"
        )
    description = server.get("description")
    if not isinstance(description, str) or not 0 < len(description) <= MAX_DESCRIPTION:
        size = len(description) if isinstance(description, str) else description
        problems.append(
            f"server.json: description must be 1 to {MAX_DESCRIPTION} characters, got {size!r}"
        )
    packages = server.get("packages")
    pypi = [p for p in packages if isinstance(p, dict)] if isinstance(packages, list) else []
    if len(pypi) != 1 or pypi[0].get("registryType") != "pypi":
        problems.append("server.json: packages must be one package with registryType 'pypi'")
    else:
        package = pypi[0]
        if package.get("identifier") != project:
            problems.append(
                f"server.json: the package is {package.get('identifier')!r}, expected {project!r}"
            )
        if package.get("transport") != {"type": "stdio"}:
            problems.append(
                f"server.json: the transport is {package.get('transport')!r}, "
                "expected {'type': 'stdio'}"
            )
    markers = _MARKER.findall(readme)
    if markers != [name]:
        problems.append(f"README.md: mcp-name markers {markers!r}, expected exactly [{name!r}]")
    return problems


def release_problems(
    tag: str,
    *,
    project: Mapping[str, Any],
    package_version: str,
    server: Mapping[str, Any],
    readme: str,
) -> list[str]:
    """Every reason the release of ``tag`` must stop (empty: release it)."""
    version = tag_version(tag)
    if version is None:
        return [f"tag {tag!r} names no version (expected v + a version, e.g. v0.1.0)"]
    packages = server.get("packages")
    first = packages[0] if isinstance(packages, list) and packages else {}
    said = {
        "pyproject.toml": project.get("version"),
        "audit.__version__": package_version,
        "server.json version": server.get("version"),
        "server.json package version": first.get("version") if isinstance(first, dict) else None,
    }
    problems = [
        f"{where} says {value!r}, the tag {tag} says {version!r}"
        for where, value in said.items()
        if value != version
    ]
    return problems + server_problems(server, str(project.get("name")), readme)


def check(tag: str, root: Path = ROOT) -> list[str]:
    """:func:`release_problems` for the checkout at ``root``."""
    import audit

    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    try:
        server = json.loads((root / "server.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        return [f"server.json: cannot be read as JSON: {error}"]
    readme = (root / "README.md").read_text(encoding="utf-8")
    return release_problems(
        tag, project=project, package_version=audit.__version__, server=server, readme=readme
    )


def _run(args: Sequence[str | Path], cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(  # noqa: S603 (uv and the citeseal it just installed, our arguments)
        [str(a) for a in args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(
            f"error: {' '.join(map(str, args[:3]))} … exited {done.returncode}: {last}"
        )
    return done.stdout


def smoke(dist: Path, uv: Path = ROOT / ".tools" / "bin" / "uv") -> list[str]:
    """Install each built distribution into a fresh venv outside the checkout and run it;
    returns one line per distribution that passed (raises SystemExit on the first failure)."""
    built = sorted(dist.glob("citeseal-*.tar.gz")) + sorted(dist.glob("citeseal-*.whl"))
    kinds = {p.suffix for p in built}
    if kinds != {".gz", ".whl"}:
        raise SystemExit(
            f"error: {dist} must hold one sdist and one wheel, found {[p.name for p in built]}"
        )
    passed = []
    for artefact in built:
        with tempfile.TemporaryDirectory(prefix="citeseal-smoke-") as temp:
            work = Path(temp)
            _run([uv, "venv", "--quiet", "--python", sys.executable, work / "venv"], cwd=work)
            _run(
                [
                    uv,
                    "pip",
                    "install",
                    "--quiet",
                    "--python",
                    work / "venv/bin/python",
                    artefact.resolve(),
                ],
                cwd=work,
            )
            citeseal = work / "venv" / "bin" / "citeseal"
            if not _run([citeseal, "--help"], cwd=work).startswith("Usage: citeseal"):
                raise SystemExit(f"error: {artefact.name}: citeseal --help printed no usage")
            demo = _run([citeseal, "demo", "--out", "demo"], cwd=work).splitlines()
            if f"   {DEMO_FAIL}" not in demo:
                raise SystemExit(
                    f"error: {artefact.name}: citeseal demo did not print {DEMO_FAIL!r}"
                )
            passed.append(f"{artefact.name}: installed in a clean venv; --help and demo ran")
    return passed


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 3 and args[:2] == ["check", "--tag"]:
        problems = check(args[2])
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        if not problems:
            print(f"release {args[2]}: versions and server.json agree")
        return 1 if problems else 0
    if len(args) == 2 and args[0] == "smoke":
        for line in smoke(Path(args[1])):
            print(line)
        return 0
    print("usage: python -m pipeline.release check --tag vX.Y.Z | smoke DIST", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
