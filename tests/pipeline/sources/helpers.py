"""Shared helpers for the literature source tests."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from hypothesis import strategies as st

from pipeline.http import HttpClient
from pipeline.pacing import HOST_RATES
from pipeline.records import ParseResult
from pipeline.settings import Settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RAW_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
UNPACED = dict.fromkeys(HOST_RATES, 0.0)


def fixture(source: str, name: str) -> bytes:
    return (FIXTURES / source / name).read_bytes()


def wrapper_body(path: Path) -> tuple[str, str]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data["body"], data["url"]


def mock_client(handler: Callable[[httpx.Request], httpx.Response]) -> HttpClient:
    """An unpaced client over an in-process fake API."""
    return HttpClient(Settings(), transport=httpx.MockTransport(handler), rates=UNPACED)


def assert_conformant(result: ParseResult) -> None:
    """Every record has a title and ≥ 1 passage; no passage text holds a raw markup tag."""
    for record in result.records:
        assert record.title, record.record_id
        assert record.passages, record.record_id
        for passage in record.passages:
            assert passage.text.strip(), (record.record_id, passage.path)
            assert not RAW_TAG.search(passage.text), (record.record_id, passage.path)


def json_values(keys: list[str]) -> st.SearchStrategy[object]:
    """Arbitrary JSON whose object keys come from ``keys`` (a parser's field names), for
    "any JSON gives records or a ParseError" property tests."""
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.sampled_from(keys), children, max_size=4)
        ),
        max_leaves=30,
    )
