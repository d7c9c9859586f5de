"""The LLM judge against a fake chat server on 127.0.0.1 started by each test: good answers
(OpenAI-compatible and Anthropic), garbage, a wrong label, evidence not in the passage, a
timeout, HTTP 500 and 429, a refused connection; and its configuration from the environment."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from audit.errors import InputError
from audit.support.judges import JUDGES, judge_by_name
from audit.support.llm import (
    PROMPT_SHA256,
    SYSTEM_PROMPT,
    LLMJudge,
    Unusable,
    config_from_env,
    parse_verdict,
)
from audit.support.model import Evidence

PASSAGE = "Zentravir exposure does not increase the risk of Farrow syndrome."
EVIDENCE = Evidence(PASSAGE, "pmid:99000001", "abstract.4")
CLAIM = "Zentravir raises the risk of Farrow syndrome."
KEY = "sk-test-NOT-A-REAL-KEY-1234"

Reply = tuple[int, bytes]


class FakeLLM:
    """A chat server answering each POST with ``reply(request body)``; records requests."""

    def __init__(self, reply: Callable[[dict[str, Any]], Reply]) -> None:
        self.reply = reply
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                fake.requests.append((self.path, dict(self.headers.items()), body))
                status, data = fake.reply(body)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out
                    pass

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[dict[str, Any]], Reply]], FakeLLM]]:
    started: list[FakeLLM] = []

    def start(reply: Callable[[dict[str, Any]], Reply]) -> FakeLLM:
        started.append(FakeLLM(reply))
        return started[-1]

    yield start
    for fake in started:
        fake.close()


def openai_reply(content: str) -> Reply:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    return 200, json.dumps(body).encode()


def anthropic_reply(content: str) -> Reply:
    body = {"type": "message", "content": [{"type": "text", "text": content}]}
    return 200, json.dumps(body).encode()


def answer(label: str, evidence: str, reason: str = "The passage reports no increase.") -> str:
    return json.dumps({"label": label, "reason": reason, "evidence": evidence})


def judge_at(url: str, api: str = "openai", **env: str) -> LLMJudge:
    values = {"CITESEAL_LLM_URL": url, "CITESEAL_LLM_MODEL": "tiny-model:1b", **env}
    judge = judge_by_name(f"llm-{api}", values)
    assert isinstance(judge, LLMJudge)
    return judge


def test_a_good_openai_answer_is_the_label_with_its_evidence_span(serve: Any) -> None:
    fake = serve(lambda body: openai_reply(answer("contradicted", "does not increase the risk")))
    judge = judge_at(fake.url + "/v1", OPENAI_API_KEY=KEY)
    result = judge.judge(CLAIM, EVIDENCE)
    assert result.label == "contradicted"
    assert result.reason == "The passage reports no increase."
    assert result.evidence is not None
    assert PASSAGE[result.evidence.start : result.evidence.end] == "does not increase the risk"
    assert result.judge == "llm-openai"
    assert result.judge_version == f"1 model=tiny-model:1b prompt=sha256:{PROMPT_SHA256[:12]}"
    path, headers, body = fake.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "tiny-model:1b"
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert json.dumps(CLAIM) in body["messages"][1]["content"]
    assert json.dumps(PASSAGE) in body["messages"][1]["content"]


def test_a_good_anthropic_answer_sends_the_key_header_and_the_version(serve: Any) -> None:
    fake = serve(lambda body: anthropic_reply(answer("supported", "Zentravir exposure")))
    result = judge_at(fake.url, "anthropic", ANTHROPIC_API_KEY=KEY).judge(CLAIM, EVIDENCE)
    assert (result.label, result.judge) == ("supported", "llm-anthropic")
    path, headers, body = fake.requests[0]
    assert path == "/v1/messages"
    assert headers["x-api-key"] == KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert body["system"] == SYSTEM_PROMPT
    assert "authorization" not in headers


def test_not_mentioned_needs_no_evidence(serve: Any) -> None:
    fake = serve(lambda body: openai_reply(answer("not_mentioned", "", "Nothing about it.")))
    result = judge_at(fake.url).judge(CLAIM, EVIDENCE)
    assert (result.label, result.evidence) == ("not_mentioned", None)
    assert "authorization" not in fake.requests[0][1]  # no key set: none sent


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("Sure! It is contradicted.", "the answer is not JSON"),
        ("[1, 2]", "the answer is not a JSON object"),
        (
            json.dumps({"label": "supported", "reason": "x"}),
            "the answer has keys label, reason; expected evidence, label, reason",
        ),
        (
            answer("probably", "does not increase"),
            'the answer\'s label is "probably"; expected one of supported, contradicted, '
            "not_mentioned",
        ),
        (
            answer("abstain", ""),
            'the answer\'s label is "abstain"; expected one of supported, '
            "contradicted, not_mentioned",
        ),
        (
            answer("supported", "zentravir cures Farrow"),
            "the answer's evidence quote is not in the passage",
        ),
        (answer("contradicted", ""), "the answer labels it contradicted without an evidence quote"),
        (
            answer("supported", "Zentravir", reason="  "),
            "the answer's reason is not a non-empty string",
        ),
    ],
    ids=[
        "garbage",
        "not-object",
        "missing-key",
        "wrong-label",
        "abstain-label",
        "evidence-not-in-passage",
        "no-evidence",
        "empty-reason",
    ],
)
def test_a_malformed_answer_is_abstain_with_the_reason(serve: Any, content: str, why: str) -> None:
    fake = serve(lambda body: openai_reply(content))
    result = judge_at(fake.url).judge(CLAIM, EVIDENCE)
    assert result.label == "abstain"
    assert result.reason == f"The LLM judge gave no usable answer: {why}."
    assert result.evidence is None
    assert result.judge == "llm-openai"


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ((500, b'{"error": "boom"}'), "HTTP 500"),
        ((429, b'{"error": "slow down"}'), "HTTP 429 (rate limited)"),
        ((200, b"<html>not json</html>"), "the response is not JSON"),
        ((200, b'{"choices": []}'), "the response has no choices"),
        (
            (200, b'{"choices": [{"message": {"content": null}}]}'),
            "the response's first choice has no text content",
        ),
    ],
    ids=["500", "429", "html-body", "no-choices", "null-content"],
)
def test_an_http_error_or_bad_envelope_is_abstain(serve: Any, reply: Reply, why: str) -> None:
    fake = serve(lambda body: reply)
    result = judge_at(fake.url).judge(CLAIM, EVIDENCE)
    assert (result.label, result.reason) == (
        "abstain",
        f"The LLM judge gave no usable answer: {why}.",
    )


def test_an_anthropic_answer_without_a_text_block_is_abstain(serve: Any) -> None:
    fake = serve(lambda body: (200, b'{"content": [{"type": "tool_use"}]}'))
    result = judge_at(fake.url, "anthropic", ANTHROPIC_API_KEY=KEY).judge(CLAIM, EVIDENCE)
    assert result.reason == "The LLM judge gave no usable answer: the response has no text block."


def test_a_timeout_is_abstain_and_does_not_wait_for_the_server(serve: Any) -> None:
    released = threading.Event()

    def slow(body: dict[str, Any]) -> Reply:
        released.wait(60)  # answers only once the test lets it: after the judge has returned
        return openai_reply(answer("supported", "Zentravir"))

    fake = serve(slow)
    result = judge_at(fake.url, CITESEAL_LLM_TIMEOUT="0.2").judge(CLAIM, EVIDENCE)
    released.set()  # a judge that waited for the server would have had its "supported" now
    assert (result.label, result.reason) == (
        "abstain",
        "The LLM judge gave no usable answer: no answer within 0.2 s (timeout).",
    )


def test_a_refused_connection_is_abstain_without_the_address(serve: Any) -> None:
    fake = serve(lambda body: openai_reply("{}"))
    url = fake.url
    fake.close()
    result = judge_at(url).judge(CLAIM, EVIDENCE)
    assert result.label == "abstain"
    assert (
        result.reason == "The LLM judge gave no usable answer: the request failed (ConnectError)."
    )


def test_an_oversized_response_is_abstain(serve: Any) -> None:
    fake = serve(lambda body: (200, b" " * ((1 << 20) + 1)))
    result = judge_at(fake.url).judge(CLAIM, EVIDENCE)
    assert result.reason == (
        "The LLM judge gave no usable answer: the response is over 1,048,576 bytes."
    )


def test_the_key_never_reaches_a_result_or_repr(serve: Any) -> None:
    replies = [openai_reply(answer("supported", "Zentravir")), (500, KEY.encode())]
    fake = serve(lambda body: replies.pop(0))
    judge = judge_at(fake.url, OPENAI_API_KEY=KEY)
    shown = [judge.judge(CLAIM, EVIDENCE).model_dump_json() for _ in range(2)]
    assert all(KEY not in text for text in [*shown, repr(judge), repr(judge.config)])


def test_the_registry_holds_both_llm_judges_and_an_unknown_name_lists_them() -> None:
    assert {"llm-openai", "llm-anthropic"} <= set(JUDGES)
    with pytest.raises(InputError) as caught:
        judge_by_name("gpt", {})
    expected = ", ".join(sorted(JUDGES))
    assert caught.value.message == f"unknown judge 'gpt' (expected one of {expected})"


@pytest.mark.parametrize(
    ("api", "env", "message"),
    [
        ("openai", {}, "the llm-openai judge needs CITESEAL_LLM_MODEL (the model name)"),
        (
            "openai",
            {"CITESEAL_LLM_MODEL": "a model"},
            "CITESEAL_LLM_MODEL must be a model name (letters, digits and ._:/@+-, at most 200 "
            "characters), got 'a model'",
        ),
        (
            "anthropic",
            {"CITESEAL_LLM_MODEL": "claude"},
            "the llm-anthropic judge needs an API key in ANTHROPIC_API_KEY",
        ),
        (
            "openai",
            {"CITESEAL_LLM_MODEL": "m", "CITESEAL_LLM_TIMEOUT": "nan"},
            "CITESEAL_LLM_TIMEOUT must be a number of seconds > 0 and at most 600, got 'nan'",
        ),
        (
            "openai",
            {"CITESEAL_LLM_MODEL": "m", "CITESEAL_LLM_URL": "ftp://host/v1"},
            "CITESEAL_LLM_URL must be an http:// or https:// address without user, query or "
            "fragment, got 'ftp://host/v1'",
        ),
        (
            "openai",
            {"CITESEAL_LLM_MODEL": "m", "CITESEAL_LLM_URL": "https://u:p@host/v1"},
            "CITESEAL_LLM_URL must be an http:// or https:// address without user, query or "
            "fragment, got 'https://u:p@host/v1'",
        ),
        (
            "openai",
            {
                "CITESEAL_LLM_MODEL": "m",
                "CITESEAL_LLM_URL": "http://llm.example",
                "K": KEY,
                "CITESEAL_LLM_API_KEY_ENV": "K",
            },
            "CITESEAL_LLM_URL 'http://llm.example' is plain http to another machine: the API "
            "key would travel unencrypted (use https://, or a loopback host)",
        ),
        (
            "openai",
            {"CITESEAL_LLM_MODEL": "m", "OPENAI_API_KEY": "has space " + KEY},
            "OPENAI_API_KEY must be printable ASCII without spaces (the value is not shown)",
        ),
        (
            "openai",
            {"CITESEAL_LLM_MODEL": "m", "CITESEAL_LLM_API_KEY_ENV": "NOT-A-NAME"},
            "CITESEAL_LLM_API_KEY_ENV must name an environment variable, got 'NOT-A-NAME'",
        ),
    ],
    ids=[
        "no-model",
        "bad-model",
        "anthropic-no-key",
        "bad-timeout",
        "bad-scheme",
        "userinfo",
        "plain-http-with-key",
        "bad-key",
        "bad-key-variable",
    ],
)
def test_a_bad_configuration_is_one_exact_error(
    api: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        config_from_env(api, env)  # type: ignore[arg-type]  # the two apis are parametrized
    assert caught.value.message == message
    assert KEY not in message


def test_the_key_variable_can_be_renamed_and_defaults_apply() -> None:
    config = config_from_env(
        "openai", {"CITESEAL_LLM_MODEL": "m", "CITESEAL_LLM_API_KEY_ENV": "MY_KEY", "MY_KEY": KEY}
    )
    assert (config.url, config.api_key, config.timeout) == (
        "https://api.openai.com/v1/chat/completions",
        KEY,
        60.0,
    )
    anthropic = config_from_env("anthropic", {"CITESEAL_LLM_MODEL": "c", "ANTHROPIC_API_KEY": KEY})
    assert anthropic.url == "https://api.anthropic.com/v1/messages"


def test_parse_verdict_only_ever_raises_unusable() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.text(max_size=200))
    def check(text: str) -> None:
        try:
            label, _, span = parse_verdict(text, PASSAGE)
        except Unusable:
            return
        assert label in ("supported", "contradicted", "not_mentioned")
        assert span is None or PASSAGE[span.start : span.end] == span.text

    check()
