"""``citeseal demo``: offline, planted FAIL with the Tekmeria counts, a browsable site."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from audit.errors import InputError
from pipeline.demo import run_demo, shown

README = Path(__file__).resolve().parents[2] / "README.md"
_RUN_SPECIFIC = re.compile(r"\d{8}T\d{6}Z|sha256 [0-9a-f]{12}")


def readme_demo_output() -> str:
    """The demo's output as the README prints it (between its demo-output markers)."""
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- demo-output -->")[1].split("<!-- /demo-output -->")[0]
    return block.split("```\n")[1]


def test_demo_prints_the_planted_fail_and_leaves_a_site(tmp_path: Path) -> None:
    out = tmp_path / "site" / "demo"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pipeline.cli import main; main()",
            "demo",
            "--out",
            "site/demo",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
        cwd=tmp_path,  # so it prints the paths make demo prints in a checkout
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "   verdict: FAIL  (6 citations: 1 malformed, 1 forged, 1 quote_mismatch, 3 ok)" in lines
    assert (
        "   fabricated: 2  retracted cited: 1  cited sentences: 3/7  verbatim quotes: 2/3" in lines
    )
    assert (
        "   re-audit: 2 citations of the published reports changed status since publication"
        in lines
    )
    assert lines[-1] == "   22 pages: site/demo/public/index.html"
    # the README shows this very output, but for the stamps and digests of the run
    assert _RUN_SPECIFIC.sub("…", done.stdout) == _RUN_SPECIFIC.sub("…", readme_demo_output())
    text = done.stdout
    for planted in (
        "       forged         pmid:99000001/abstract.3~",
        "       malformed      pmid:99000001-abstract",
        "[retracted]",
        '"once daily for 24 weeks" [version_changed]',
        "] uncited: Parents should discuss the treatment with their paediatrician.",
        'closest: "Zentravir exposure does not increase the risk of Farrow syndrome."',
        "Extended-Release Zentravir in Adults With Farrow Syndrome…  (status WITHDRAWN)",
        "                      record: status ACTIVE_NOT_RECRUITING",
    ):
        assert planted in text
    assert (out / "public" / "index.html").is_file()
    reaudit = (out / "public" / "reaudit.html").read_text(encoding="utf-8")
    assert reaudit.count("<strong>new version</strong>") == 2
    # the pages publish by the licences of the snapshot they re-audit against: the trial's
    # public-domain text whole, the PubMed abstracts (licence unknown) as excerpts
    page = (out / "public" / "reports" / "answer.html").read_text(encoding="utf-8")
    assert "licence public-domain" in page and "licence unknown" in page
    assert "(the record&#39;s licence is unknown)" in page
    assert done.stderr == ""


def test_demo_refuses_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    try:
        run_demo(tmp_path, echo=lambda _: None)
    except InputError as error:
        assert error.message == (
            f"refusing to use {tmp_path}: it is not a citeseal demo folder (no .citeseal-demo file)"
        )
    else:
        raise AssertionError("the demo used a folder it does not own")
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_the_demo_prints_paths_a_user_can_type_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown(tmp_path / "site" / "demo" / "public" / "index.html") == (
        "site/demo/public/index.html"
    )
    assert shown(Path("site/demo/answer.md")) == "site/demo/answer.md"
    elsewhere = tmp_path.parent / "elsewhere" / "index.html"
    assert shown(elsewhere) == str(elsewhere)
