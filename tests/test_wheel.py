"""The built wheel works with no checkout beside it: build it, install it into a clean venv, and
run ``citeseal demo``, ``citeseal serve`` (over stdio) and ``citeseal --help`` from a folder
outside the checkout.

Uses the bootstrapped uv (``.tools/bin/uv``, ``make venv``) and uv's shared cache; the build
backend (hatchling) comes from that cache or PyPI. When the backend cannot be fetched the test
is skipped with the reason; any other build or install failure fails it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
UV = ROOT / ".tools" / "bin" / "uv"
FAIL_LINE = "   verdict: FAIL  (6 citations: 1 malformed, 1 forged, 1 quote_mismatch, 3 ok)"
# uv's words when build-system.requires cannot be resolved or downloaded (no network, no cache)
_BACKEND_UNAVAILABLE = ("Failed to resolve requirements from `build-system.requires`", "hatchling")

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(not UV.is_file(), reason=f"no bootstrapped uv at {UV} (run make venv)"),
]


def _clean_env() -> dict[str, str]:
    """The environment without anything that points back into the checkout or its venv."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"}
    }
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env["UV_NO_PROGRESS"] = "1"
    return env


def _run(args: list[str | Path], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=cwd,
        env=_clean_env(),
    )


def _build_wheel(dist: Path) -> Path:
    done = _run([UV, "build", "--wheel", "--out-dir", dist, ROOT], cwd=dist.parent)
    if done.returncode != 0 and all(words in done.stderr for words in _BACKEND_UNAVAILABLE):
        cause = next(line for line in done.stderr.splitlines() if "hatchling" in line)
        pytest.skip(f"the build backend cannot be fetched: {cause.strip()}")
    assert done.returncode == 0, done.stderr
    (wheel,) = dist.glob("citeseal-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean venv (outside the checkout) with only the built wheel and its dependencies;
    returns its ``bin`` folder."""
    base = tmp_path_factory.mktemp("wheel")
    assert not base.resolve().is_relative_to(ROOT)
    dist = base / "dist"
    dist.mkdir()
    wheel = _build_wheel(dist)
    names = set(zipfile.ZipFile(wheel).namelist())
    for packaged in (
        "audit/_resources/templates/base.html.j2",
        "audit/_resources/static/site.css",
        "audit/_resources/demo/demo.toml",
        "audit/schemas/report.schema.json",
    ):
        assert packaged in names, packaged
    venv = base / "venv"
    done = _run([UV, "venv", "--quiet", "--python", sys.executable, venv], cwd=base)
    assert done.returncode == 0, done.stderr
    done = _run([UV, "pip", "install", "--python", venv / "bin" / "python", wheel], cwd=base)
    assert done.returncode == 0, done.stderr
    return venv / "bin"


def test_the_installed_wheel_finds_its_packaged_files_not_the_checkout(installed: Path) -> None:
    work = installed.parent.parent / "elsewhere"
    work.mkdir(exist_ok=True)
    code = "from audit.resources import resources as r; x = r(); print(x.checkout, x.templates)"
    done = _run([installed / "python", "-c", code], cwd=work)
    assert done.returncode == 0, done.stderr
    checkout, templates = done.stdout.split()
    assert checkout == "False"
    assert Path(templates).is_relative_to(installed.parent)  # inside the venv's site-packages
    assert Path(templates).parts[-3:] == ("audit", "_resources", "templates")


def test_citeseal_demo_from_the_wheel_prints_the_planted_fail_and_renders_the_site(
    installed: Path,
) -> None:
    work = installed.parent.parent / "work"
    work.mkdir(exist_ok=True)
    done = _run([installed / "citeseal", "demo", "--out", "X"], cwd=work, timeout=240)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert FAIL_LINE in lines
    assert lines[-1] == "   22 pages: X/public/index.html"
    index = work / "X" / "public" / "index.html"
    assert index.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # rendered from the packaged templates and assets, which are the checkout's files
    assert (work / "X" / "public" / "static" / "site.css").read_bytes() == (
        ROOT / "site" / "static" / "site.css"
    ).read_bytes()


def test_citeseal_help_from_the_wheel(installed: Path) -> None:
    done = _run([installed / "citeseal", "--help"], cwd=installed.parent.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: citeseal [OPTIONS] COMMAND [ARGS]...")
    assert "demo" in done.stdout


def test_a_standalone_html_report_from_the_wheel_inlines_the_packaged_stylesheet(
    installed: Path, tmp_path: Path
) -> None:
    work = installed.parent.parent / "work"
    if not (work / "X" / "answer.md").is_file():  # the demo test made it; make it when run alone
        work.mkdir(exist_ok=True)
        assert _run([installed / "citeseal", "demo", "--out", "X"], cwd=work).returncode == 0
    done = _run(
        [
            installed / "citeseal",
            "audit",
            "X/answer.md",
            "--snapshot",
            "X/snapshots/demo",
            "--demo-key",
            "--format",
            "html",
            "--out",
            tmp_path,
        ],
        cwd=work,
    )
    assert done.returncode == 1, done.stderr  # the planted answer fails
    html = (tmp_path / "answer.html").read_text(encoding="utf-8")
    css = (ROOT / "site" / "static" / "site.css").read_text(encoding="utf-8")
    assert css in html  # inlined (and allowed by its hash in the page's CSP)


@pytest.mark.anyio
async def test_citeseal_serve_from_the_wheel_answers_over_stdio(installed: Path) -> None:
    work = installed.parent.parent / "work"
    if not (work / "X" / "snapshots" / "demo").is_dir():  # made by the demo test, or here
        work.mkdir(exist_ok=True)
        assert _run([installed / "citeseal", "demo", "--out", "X"], cwd=work).returncode == 0
    errlog = (work / "serve-stderr.txt").open("w+", encoding="utf-8")
    params = StdioServerParameters(
        command=str(installed / "citeseal"),
        args=["serve", "--snapshot", "X/snapshots/demo", "--demo-key"],
        env={**_clean_env(), "CITESEAL_DATA_DIR": str(work / "data")},
        cwd=str(work),
    )
    with errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            found = await client.call_tool("search_trials", {"query": "zentravir", "limit": 1})
    assert {"search_literature", "search_trials", "audit_answer"} <= tools
    assert not found.is_error and isinstance(found.structured_content, dict)
    assert found.structured_content["results"][0]["handle"].startswith("nct:NCT99")
