"""The LLM judge's pure parts exactly: the request it sends, the envelope it reads and the
verdict it accepts (audit/support/llm.py). The HTTP round trips are in test_llm.py."""

from __future__ import annotations

import json

import httpx
import pytest

from audit.errors import InputError
from audit.support.llm import (
    ANTHROPIC_VERSION,
    MAX_REASON_CHARS,
    MAX_RESPONSE_BYTES,
    MAX_TOKENS,
    SYSTEM_PROMPT,
    LLMConfig,
    LLMJudge,
    Unusable,
    answer_text,
    config_from_env,
    parse_verdict,
    request_of,
    user_message,
)
from audit.support.model import Evidence

PASSAGE = 'Zentravir "reduced" flares by 12 % — in café staff.'
EVIDENCE = Evidence(PASSAGE, "pmid:99000001", "abstract.4")
CLAIM = "Zentravir cut flares \u2014 “a lot”."
KEY = "sk-test-NOT-A-REAL-KEY-1234"
USER = (
    'Claim (JSON string): "Zentravir cut flares \u2014 “a lot”."\n'
    'Passage (JSON string): "Zentravir \\"reduced\\" flares by 12 % — in café staff."'
)


def test_the_claim_and_passage_are_json_strings_with_their_letters_kept() -> None:
    assert user_message(CLAIM, EVIDENCE) == USER


@pytest.mark.parametrize("key", [KEY, None])
def test_an_openai_request_is_exactly_the_chat_completions_body(key: str | None) -> None:
    config = LLMConfig("openai", "http://127.0.0.1:1/v1/chat/completions", "m-1", 5.0, key)
    headers, body = request_of(config, CLAIM, EVIDENCE)
    expected = {"content-type": "application/json", "accept": "application/json"}
    if key is not None:
        expected["authorization"] = f"Bearer {KEY}"
    assert headers == expected
    assert body == {
        "model": "m-1",
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER},
        ],
    }
    assert MAX_TOKENS == 400


@pytest.mark.parametrize("key", [KEY, None])
def test_an_anthropic_request_is_exactly_the_messages_body(key: str | None) -> None:
    config = LLMConfig("anthropic", "https://api.anthropic.com/v1/messages", "c-2", 5.0, key)
    headers, body = request_of(config, CLAIM, EVIDENCE)
    expected = {
        "content-type": "application/json",
        "accept": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if key is not None:
        expected["x-api-key"] = KEY
    assert headers == expected
    assert ANTHROPIC_VERSION == "2023-06-01"
    assert body == {
        "model": "c-2",
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "system": SYSTEM_PROMPT,
        "messages": [{"role": "user", "content": USER}],
    }


def _anthropic(blocks: object) -> bytes:
    return json.dumps({"type": "message", "content": blocks}).encode()


def test_an_anthropic_answer_joins_its_text_blocks_and_skips_the_others() -> None:
    blocks = [
        {"type": "thinking", "text": "ignored"},
        {"type": "text", "text": '{"label": '},
        "not a block",
        {"type": "text", "text": '"supported"}'},
    ]
    assert answer_text("anthropic", _anthropic(blocks)) == '{"label": "supported"}'


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"[1, 2]", "the response has no content blocks"),
        (_anthropic("text"), "the response has no content blocks"),
        (_anthropic([]), "the response has no text block"),
        (_anthropic([{"type": "tool_use", "text": "x"}]), "the response has no text block"),
        (_anthropic([{"type": "text", "text": 7}]), "the response has no text block"),
        (_anthropic([{"type": "text"}]), "the response has no text block"),
        (b"{", "the response is not JSON"),
        (b"[" * 100_000, "the response is not JSON"),
    ],
)
def test_an_anthropic_envelope_without_text_is_unusable(body: bytes, why: str) -> None:
    with pytest.raises(Unusable) as raised:
        answer_text("anthropic", body)
    assert str(raised.value) == why


def _openai(choices: object) -> bytes:
    return json.dumps({"choices": choices}).encode()


def test_an_openai_answer_is_the_first_choices_content() -> None:
    choices = [{"message": {"content": "first"}}, {"message": {"content": "second"}}]
    assert answer_text("openai", _openai(choices)) == "first"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'"text"', "the response has no choices"),
        (_openai("x"), "the response has no choices"),
        (_openai([]), "the response has no choices"),
        (_openai(["x"]), "the response has no choices"),
        (_openai([{"message": "x"}]), "the response's first choice has no text content"),
        (_openai([{"message": {"content": 1}}]), "the response's first choice has no text content"),
        (_openai([{}]), "the response's first choice has no text content"),
    ],
)
def test_an_openai_envelope_without_text_is_unusable(body: bytes, why: str) -> None:
    with pytest.raises(Unusable) as raised:
        answer_text("openai", body)
    assert str(raised.value) == why


def _verdict(**fields: object) -> str:
    return json.dumps(fields)


def test_a_verdict_gives_its_label_the_reason_with_spaces_collapsed_and_the_span() -> None:
    text = "  " + _verdict(label="supported", reason=" It says\n so.\t", evidence="12 %") + "\n"
    label, reason, span = parse_verdict(text, PASSAGE)
    assert (label, reason) == ("supported", "It says so.")
    assert span is not None
    assert (span.start, span.end, span.text) == (
        PASSAGE.index("12 %"),
        PASSAGE.index("12 %") + 4,
        "12 %",
    )


def test_not_mentioned_with_no_evidence_or_null_evidence_has_no_span() -> None:
    for evidence in ("", None):
        text = _verdict(label="not_mentioned", reason="No word of it.", evidence=evidence)
        assert parse_verdict(text, PASSAGE) == ("not_mentioned", "No word of it.", None)


def test_the_reason_may_be_as_long_as_the_bound_and_no_longer() -> None:
    at_bound = "a" * MAX_REASON_CHARS
    assert MAX_REASON_CHARS == 1_000
    assert (
        parse_verdict(_verdict(label="not_mentioned", reason=at_bound, evidence=""), PASSAGE)[1]
        == at_bound
    )
    with pytest.raises(Unusable) as raised:
        parse_verdict(_verdict(label="not_mentioned", reason=at_bound + "b", evidence=""), PASSAGE)
    assert str(raised.value) == "the answer's reason is over 1,000 characters"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{}", "the answer has keys (none); expected evidence, label, reason"),
        (
            _verdict(reason="r", label="supported", evidence="x", extra=1),
            "the answer has keys evidence, extra, label, reason; expected evidence, label, reason",
        ),
        (
            _verdict(label="x" * 100, reason="r", evidence=""),
            f"the answer's label is {json.dumps('x' * 100)[:80]}; expected one of supported, "
            "contradicted, not_mentioned",
        ),
        (
            _verdict(label="supported", reason=3, evidence="12 %"),
            "the answer's reason is not a non-empty string",
        ),
        (
            _verdict(label="supported", reason="r", evidence=["12 %"]),
            "the answer's evidence is not a string",
        ),
        (
            _verdict(label="supported", reason="r", evidence=None),
            "the answer labels it supported without an evidence quote",
        ),
        ("[]", "the answer is not a JSON object"),
        ("not json", "the answer is not JSON"),
    ],
)
def test_an_unusable_verdict_says_exactly_why(text: str, why: str) -> None:
    with pytest.raises(Unusable) as raised:
        parse_verdict(text, PASSAGE)
    assert str(raised.value) == why


def test_the_judge_sends_through_the_transport_it_was_given() -> None:
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        content = _verdict(label="supported", reason="It says so.", evidence="12 %")
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    config = LLMConfig("openai", "https://llm.invalid/v1/chat/completions", "m-1", 5.0, KEY)
    result = LLMJudge(config, transport=httpx.MockTransport(reply)).judge(CLAIM, EVIDENCE)
    assert (result.label, result.reason) == ("supported", "It says so.")
    assert [str(r.url) for r in seen] == ["https://llm.invalid/v1/chat/completions"]
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"


def _config_error(**env: str) -> InputError:
    with pytest.raises(InputError) as raised:
        config_from_env("openai", {"CITESEAL_LLM_MODEL": "m-1", **env})
    return raised.value


def test_a_missing_model_names_the_variable_and_points_to_the_docs() -> None:
    with pytest.raises(InputError) as raised:
        config_from_env("anthropic", {})
    assert str(raised.value) == "the llm-anthropic judge needs CITESEAL_LLM_MODEL (the model name)"
    assert raised.value.advice == "see docs/support.md, LLM judges"


@pytest.mark.parametrize(
    "url",
    [
        "https://llm.test:99999/v1",  # a port out of range
        "https://llm.test/v1?key=1",  # a query alone
        "https://llm.test/v1#part",  # a fragment alone
        "https://llm.test/v 1",  # a space alone
    ],
)
def test_each_flaw_of_the_address_alone_is_refused_with_the_same_message(url: str) -> None:
    assert str(_config_error(CITESEAL_LLM_URL=url)) == (
        "CITESEAL_LLM_URL must be an http:// or https:// address without user, query or "
        f"fragment, got {url!r}"
    )


def test_only_trailing_slashes_are_dropped_from_the_address() -> None:
    config = config_from_env(
        "openai", {"CITESEAL_LLM_MODEL": "m-1", "CITESEAL_LLM_URL": "https://llm.test/apiX//"}
    )
    assert config.url == "https://llm.test/apiX/chat/completions"


@pytest.mark.parametrize("raw", ["soon", "0", "-3", "600.5", "nan"])
def test_a_timeout_that_is_not_a_positive_number_of_at_most_600_seconds_is_refused(
    raw: str,
) -> None:
    assert str(_config_error(CITESEAL_LLM_TIMEOUT=raw)) == (
        f"CITESEAL_LLM_TIMEOUT must be a number of seconds > 0 and at most 600, got {raw!r}"
    )


@pytest.mark.parametrize(("raw", "seconds"), [("600", 600.0), ("0.5", 0.5)])
def test_a_timeout_up_to_the_bound_is_taken(raw: str, seconds: float) -> None:
    config = config_from_env("openai", {"CITESEAL_LLM_MODEL": "m-1", "CITESEAL_LLM_TIMEOUT": raw})
    assert config.timeout == seconds


def test_a_label_outside_ascii_is_shown_as_written() -> None:
    with pytest.raises(Unusable) as raised:
        parse_verdict(_verdict(label="étayé", reason="r", evidence=""), PASSAGE)
    assert str(raised.value).startswith('the answer\'s label is "étayé"; expected one of')


def test_the_evidence_span_is_the_quotes_first_place_in_the_passage() -> None:
    passage = "flares fell; later, flares fell again"
    _, _, span = parse_verdict(
        _verdict(label="supported", reason="r", evidence="flares fell"), passage
    )
    assert span is not None and (span.start, span.end) == (0, 11)


def _openai_body(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


GOOD = _verdict(label="supported", reason="It says so.", evidence="12 %")


def _judge(handler: object) -> LLMJudge:
    config = LLMConfig("openai", "https://llm.invalid/v1/chat/completions", "m-1", 7.5, KEY)
    return LLMJudge(config, transport=httpx.MockTransport(handler))  # type: ignore[arg-type]


def test_the_client_takes_nothing_from_the_environment_and_follows_no_redirect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[dict[str, object]] = []
    real = httpx.Client

    def client(**kwargs: object) -> httpx.Client:
        made.append(kwargs)
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(httpx, "Client", client)
    result = _judge(lambda request: httpx.Response(200, content=_openai_body(GOOD))).judge(
        CLAIM, EVIDENCE
    )
    assert result.label == "supported"
    assert len(made) == 1
    assert (made[0]["timeout"], made[0]["trust_env"], made[0]["follow_redirects"]) == (
        7.5,
        False,
        False,
    )


def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(302, headers={"location": "https://elsewhere.invalid/steal"})

    result = _judge(handler).judge(CLAIM, EVIDENCE)
    assert (result.label, result.reason) == (
        "abstain",
        "The LLM judge gave no usable answer: HTTP 302.",
    )
    assert [str(r.url) for r in seen] == ["https://llm.invalid/v1/chat/completions"]
    assert seen[0].method == "POST"


def test_a_body_streamed_in_chunks_is_joined_and_one_of_exactly_the_bound_is_read() -> None:
    body = _openai_body(GOOD)
    chunks = [body[:10], body[10:25], body[25:]]
    result = _judge(lambda request: httpx.Response(200, content=iter(chunks))).judge(
        CLAIM, EVIDENCE
    )
    assert result.label == "supported"
    padded = body + b" " * (MAX_RESPONSE_BYTES - len(body))  # JSON allows trailing spaces
    assert len(padded) == MAX_RESPONSE_BYTES == 1 << 20
    result = _judge(lambda request: httpx.Response(200, content=padded)).judge(CLAIM, EVIDENCE)
    assert result.label == "supported"
    over = _judge(lambda request: httpx.Response(200, content=padded + b" ")).judge(CLAIM, EVIDENCE)
    assert (
        over.reason == "The LLM judge gave no usable answer: the response is over 1,048,576 bytes."
    )
