"""No published page and no report field carries an absolute local path: reports audited with
absolute paths, older reports that hold them, and free text (a harvest failure) that names one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from audit.errors import InputError
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from pipeline.settings import Settings
from pipeline.site.build import build_site
from pipeline.site.local_paths import local_roots, scrub_local_paths
from pipeline.snapshot.build import build_snapshot
from tests.cli import citeseal as run_citeseal
from tests.conftest import ROOT
from tests.pipeline.site.factory import pages_of

REPLAY = ROOT / "snapshots" / "demo" / "replay"
TRIAL = "nct:NCT99000001@2025-01-15/trial.brief_title.1"
EPOCH = {"SOURCE_DATE_EPOCH": "1750000000"}
DEMO = Keyring.demo_keyring()


def citeseal(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = run_citeseal(*args, env={**os.environ, "PYTHONPATH": str(ROOT), **EPOCH}, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return done


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Under one tmp folder: a snapshot whose openfda harvest failed (its error names the
    replay folder's absolute path, as builds did before replay errors named folders by their
    public name), an answer, and its report audited with absolute paths."""
    root = tmp_path_factory.mktemp("local-paths")
    shutil.copytree(REPLAY / "clinicaltrials", root / "replay" / "clinicaltrials")
    spec = root / "corpus" / "trials.toml"
    spec.parent.mkdir()
    spec.write_text(
        'name = "trials"\n[clinicaltrials]\nids = ["NCT99000001", "NCT99000002", "NCT99000003"]\n'
        '[openfda]\nset_ids = ["5eed0001-0000-4000-8000-000000000009"]\n',
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as older_build:  # free text the site must still scrub
        older_build.setattr("pipeline.replay.public_folder", lambda folder: str(folder))
        built = build_snapshot(  # sealed with the demo key: the CLI reads it with --demo-key
            spec,
            keyring=DEMO,
            replay=[root / "replay"],
            settings=Settings(),
            resume=False,
            allow_partial=True,
        )  # the failed label request names the replay folder: a local path
    answers = root / "answers"
    answers.mkdir()
    handle = mint(DEMO, parse_locator(TRIAL))
    (answers / "answer.md").write_text(f"The trial is for children [{handle}].\n", "utf-8")
    citeseal(
        "audit",
        str(answers / "answer.md"),
        "--snapshot",
        str(built.path),
        "--demo-key",
        "--format",
        "json",
        "--out",
        str(root / "reports"),
        cwd=ROOT,  # the answer lies outside the working folder
    )
    return root


def test_a_report_audited_with_absolute_paths_names_only_its_files(world: Path) -> None:
    report = json.loads((world / "reports" / "answer.json").read_text(encoding="utf-8"))
    assert report["source"] == "answer.md"
    assert report["snapshot"]["path"].endswith(".duckdb")
    assert "/" not in report["snapshot"]["path"]
    assert str(world) not in json.dumps(report)


def test_an_input_inside_the_working_folder_keeps_its_relative_path(world: Path) -> None:
    done = citeseal(
        "audit",
        str(world / "answers" / "answer.md"),
        "--snapshot",
        str(world / "corpus" / "trials"),
        "--demo-key",
        "--format",
        "json",
        cwd=world,
    )
    report = json.loads(done.stdout)
    assert report["source"] == "answers/answer.md"
    assert report["snapshot"]["path"].startswith("trials-")  # given absolute: its file name


def test_no_published_page_carries_an_absolute_local_path(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world)  # the project folder: it holds the replay folder named in an error
    reports = tmp_path / "reports"
    shutil.copytree(world / "reports", reports)
    # a report written before the rule: absolute source and snapshot path
    older = json.loads((reports / "answer.json").read_text(encoding="utf-8"))
    older["source"] = f"{world}/answers/older.md"
    older["snapshot"]["path"] = f"{world}/corpus/trials/old.duckdb"
    (reports / "older.json").write_text(json.dumps(older), encoding="utf-8")
    seen: list[str] = []
    out = tmp_path / "public"
    result = build_site(
        reports,
        world / "corpus",
        out,
        env=EPOCH,
        keyring=DEMO,
        on_warning=lambda w: seen.append(w.line()),
    )
    pages = pages_of(out)
    assert len(pages) == result.pages > 10
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for local in (str(world), str(tmp_path), str(ROOT), str(Path.home())):
            assert local not in html, (page.name, local)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert ">answer.md</a>" in index and ">older.md</a>" in index
    title = (out / "reports" / "older.html").read_text(encoding="utf-8")
    assert "<title>Audit of older.md · citeseal</title>" in title
    snapshot = next((out / "snapshots").glob("trials-*.html")).read_text(encoding="utf-8")
    assert (
        "…/replay holds no recorded openfda answer for 1 of the 1 set id(s) asked by GET "
        "https://api.fda.gov/drug/label.json?search=set_id%3A%225eed0001-0000-4000-8000-"
        "000000000009%22&amp;limit=1"
    ) in snapshot
    assert seen == [
        f"{next((out / 'snapshots').glob('trials-*.html')).relative_to(out).as_posix()}: "
        f"a local path ({world}) was removed from the page; fix the input that holds it"
    ]
    with pytest.raises(InputError) as caught:
        build_site(
            reports, world / "corpus", tmp_path / "strict", env=EPOCH, keyring=DEMO, strict=True
        )
    assert caught.value.message.startswith("1 warning and --strict: snapshots/trials-")
    assert not (tmp_path / "strict").exists()


def test_the_scrub_keeps_what_follows_a_folder_and_spares_longer_names() -> None:
    pages = {
        "a.html": "<p>in /home/me/work/replay and /home/me/workshop, &#39;/home/me/work&#39;</p>",
        "b.html": "<p>nothing local</p>",
    }
    clean, warnings = scrub_local_paths(pages, local_roots([Path("/home/me/work")]))
    assert clean == {
        "a.html": "<p>in …/replay and /home/me/workshop, &#39;…&#39;</p>",
        "b.html": "<p>nothing local</p>",
    }
    assert [w.line() for w in warnings] == [
        "a.html: a local path (/home/me/work) was removed from the page; "
        "fix the input that holds it"
    ]


def test_the_filesystem_root_is_never_a_local_folder() -> None:
    assert local_roots([Path("/")]) == ()
