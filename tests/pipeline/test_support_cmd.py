"""``citeseal support`` and ``citeseal audit --support`` through the CLI's error boundary, with
a deterministic fake judge registered in the judge registry (the rules judge lives elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.report import Report
from audit.support import judges
from tests.audit.planted import OTHER, h, make_corpus, write_snapshot
from tests.audit.support.fakes import FakeJudge
from tests.audit.support.test_llm import FakeLLM, answer, openai_reply
from tests.pipeline.test_audit_cmd import run, write

CONCLUSION = h("pmid:99000001/abstract.4")
FORGED = h("pmid:99000001/abstract.4", OTHER)
PLANTED = "Zentravir raises the risk of Farrow syndrome."


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_snapshot(make_corpus(), tmp_path_factory.mktemp("snap") / "planted.duckdb")


@pytest.fixture(autouse=True)
def fake_judges(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fake`` and, standing in for the default, ``rules``: the same test double."""
    monkeypatch.setitem(judges.JUDGES, "fake", lambda env: FakeJudge())
    monkeypatch.setitem(judges.JUDGES, "rules", lambda env: FakeJudge("rules", "test"))


def test_support_reports_the_planted_contradiction_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    args = ("support", PLANTED, "--handle", CONCLUSION, "--snapshot", str(snapshot))
    code, out, err = run(monkeypatch, capsys, *args, "--judge", "fake", "--demo-key")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"claim: {PLANTED}",
        "judge: fake 0",
        f"ok             {CONCLUSION}",
        "               support: contradicted (fake 0): The fake saw 0 entities.",
        '               evidence [19:36]: "does not increase"',
    ]


def test_support_json_lists_a_forged_handle_unjudged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    claim = "Zentravir exposure was studied."
    code, out, _ = run(
        monkeypatch,
        capsys,
        *("support", claim, "--handle", CONCLUSION, "--handle", FORGED),
        *("--snapshot", str(snapshot), "--json", "--demo-key"),
    )
    data = json.loads(out)
    assert code == 1  # a handle that is not ok is never a pass
    assert (data["judge"], data["judge_version"]) == ("rules", "test")  # the default judge
    assert [r["verdict"] for r in data["results"]] == ["ok", "forged"]
    assert data["results"][0]["support"]["label"] == "supported"
    assert data["results"][1]["support"] is None
    assert (data["contradicted"], data["not_judged"]) == (0, 1)


def test_a_supported_claim_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    code, out, _ = run(
        monkeypatch,
        capsys,
        *("support", "Zentravir exposure was studied.", "--handle", CONCLUSION),
        *("--snapshot", str(snapshot), "--demo-key"),
    )
    assert code == 0
    assert "support: supported (rules test)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("support", "  ", "--handle", "x"),
            "error: the claim is empty; give the sentence to check",
        ),
        (
            ("support", PLANTED, "--handle", CONCLUSION, "--judge", "oracle"),
            "error: unknown judge 'oracle' (expected one of fake, llm-anthropic, llm-openai, "
            "rules)",
        ),
        (
            ("support", PLANTED, "--handle", CONCLUSION, "--judge", "llm-openai"),
            "error: the llm-openai judge needs CITESEAL_LLM_MODEL (the model name)",
        ),
        (
            ("audit", "{answer}", "--fail-on", "contradicted"),
            "error: --fail-on contradicted needs --support (claim support is off)",
        ),
        (
            ("audit", "{answer}", "--judge", "fake"),
            "error: --judge needs --support (claim support is off)",
        ),
    ],
    ids=[
        "empty-claim",
        "unknown-judge",
        "llm-unconfigured",
        "fail-on-without-support",
        "judge-without-support",
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    monkeypatch.delenv("CITESEAL_LLM_MODEL", raising=False)
    answer = write(tmp_path, "a.md", f"{PLANTED} [{CONCLUSION}]\n")
    given = [a.replace("{answer}", str(answer)) for a in args]
    code, out, err = run(monkeypatch, capsys, *given, "--snapshot", str(snapshot), "--demo-key")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == message


def test_audit_with_support_records_it_and_fail_on_contradicted_fails(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    answer = write(tmp_path, "a.md", f"{PLANTED} [{CONCLUSION}]\n")
    base = ("audit", str(answer), "--snapshot", str(snapshot), "--demo-key", "-f", "json")
    code, out, _ = run(monkeypatch, capsys, *base, "--support", "--fail-on", "contradicted")
    report = Report.model_validate_json(out)
    assert code == 1
    assert report.verdict_reasons == ["fail: 1 citation whose passage contradicts its sentence"]
    support = report.citations()[0].support
    assert support is not None
    assert (support.label, support.judge, support.judge_version) == (
        "contradicted",
        "rules",
        "test",
    )
    code, out, _ = run(monkeypatch, capsys, *base, "--support", "--judge", "fake")
    assert code == 0  # contradicted warns unless --fail-on names it
    assert json.loads(out)["verdict"] == "warn"


NOT_CHECKED = {
    "json": '"support_checked": false',
    "text": "\n                   support: not_checked\n",
    "md": "\n     - support **not\\_checked**: claim support was not judged\n",
    "html": '<span class="badge badge-not_checked">not_checked</span>',
}


@pytest.mark.parametrize("fmt", list(NOT_CHECKED))
def test_audit_without_support_says_not_checked_and_with_it_judges(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    fmt: str,
) -> None:
    answer = write(tmp_path, "a.md", f"{PLANTED} [{CONCLUSION}]\n")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    base = ("audit", str(answer), "--snapshot", str(snapshot), "--demo-key", "-f", fmt)
    _, out, _ = run(monkeypatch, capsys, *base)
    assert out.count(NOT_CHECKED[fmt]) == 1  # the one ok citation
    if fmt == "json":
        assert '"support": {' not in out
    _, supported, _ = run(monkeypatch, capsys, *base, "--support")
    assert "not_checked" not in supported.replace("badge-not_checked {", "")
    if fmt == "json":
        assert '"support_checked": true' in supported and '"support": {' in supported


def test_audit_with_the_llm_judge_records_model_and_prompt_and_keeps_the_key_out(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    fake = FakeLLM(lambda body: openai_reply(answer("contradicted", "does not increase the risk")))
    try:
        monkeypatch.setenv("CITESEAL_LLM_URL", fake.url + "/v1")
        monkeypatch.setenv("CITESEAL_LLM_MODEL", "tiny-model")
        monkeypatch.setenv("CITESEAL_LLM_API_KEY_ENV", "MY_LLM_KEY")
        monkeypatch.setenv("MY_LLM_KEY", "sk-secret-value-0001")
        answer_file = write(tmp_path, "a.md", f"{PLANTED} [{CONCLUSION}]\n")
        code, out, err = run(
            monkeypatch,
            capsys,
            *("audit", str(answer_file), "--snapshot", str(snapshot), "--demo-key"),
            *("--support", "--judge", "llm-openai", "--fail-on", "contradicted", "-f", "json"),
        )
    finally:
        fake.close()
    assert code == 1
    support = Report.model_validate_json(out).citations()[0].support
    assert support is not None
    assert (support.label, support.judge) == ("contradicted", "llm-openai")
    assert support.judge_version.startswith("1 model=tiny-model prompt=sha256:")
    assert "sk-secret-value-0001" not in out + err
    assert fake.requests[0][1]["authorization"] == "Bearer sk-secret-value-0001"
