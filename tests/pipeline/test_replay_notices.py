"""Replaying batched Crossref notices from exchanges recorded one DOI at a time
(:class:`pipeline.replay.ReplayTransport`, Crossref's ``updates:`` requests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.errors import ParseError, ReplayMissError
from pipeline.http import HttpClient
from pipeline.replay import ReplayTransport
from pipeline.settings import Settings
from pipeline.sources import crossref
from tests.pipeline.sources.test_crossref_updates import notice, page

WORKS = "https://api.crossref.org/works"


def record(folder: Path, name: str, query: str, body: bytes) -> None:
    wrapper = {
        "url": f"{WORKS}?{query}",
        "status": 200,
        "content_type": "application/json",
        "body": body.decode(),
    }
    (folder / "crossref").mkdir(parents=True, exist_ok=True)
    (folder / "crossref" / name).write_text(json.dumps(wrapper), encoding="utf-8")


def notices(folder: Path, dois: list[str]) -> dict[str, list[tuple[str, str]]]:
    with HttpClient(Settings(), transport=ReplayTransport([folder])) as http:
        found = crossref.fetch_update_notices(http, dois)
    return {d: [(r.kind, r.target) for r in rs] for d, rs in found.items()}


def test_a_batch_is_answered_from_the_exchanges_recorded_one_doi_each(tmp_path: Path) -> None:
    retraction = notice("10.5555/n.1", ("10.5555/a.1", "retraction"))
    record(tmp_path, "a.json", "filter=updates%3A10.5555%2Fa.1&rows=100", page([retraction], 1))
    record(tmp_path, "b.json", "filter=updates:10.5555/b.1&rows=100&cursor=*", page([], 0))
    assert notices(tmp_path, ["10.5555/a.1", "10.5555/b.1"]) == {
        "10.5555/a.1": [("retraction_in", "doi:10.5555/n.1")],
        "10.5555/b.1": [],
    }


def test_a_recorded_batch_answers_a_batch_of_some_of_its_dois(tmp_path: Path) -> None:
    both = notice("10.5555/n.2", ("10.5555/a.1", "correction"), ("10.5555/b.1", "correction"))
    only_b = notice("10.5555/n.3", ("10.5555/b.1", "expression_of_concern"))
    query = "filter=updates:10.5555/a.1,updates:10.5555/b.1,updates:10.5555/c.1&rows=100&cursor=*"
    record(tmp_path, "abc.json", query, page([both, only_b], 2))
    assert notices(tmp_path, ["10.5555/c.1", "10.5555/b.1"]) == {
        "10.5555/c.1": [],
        "10.5555/b.1": [
            ("correction_in", "doi:10.5555/n.2"),
            ("expression_of_concern_in", "doi:10.5555/n.3"),
        ],
    }


def test_a_batch_with_a_doi_never_recorded_is_a_miss_naming_it(tmp_path: Path) -> None:
    record(tmp_path, "a.json", "filter=updates:10.5555/a.1&rows=100", page([], 0))
    with pytest.raises(ReplayMissError) as caught:
        notices(tmp_path, ["10.5555/a.1", "10.5555/z.9"])
    assert caught.value.message == (
        f"{tmp_path.name} holds no recorded crossref answer for 1 of the 2 DOI(s) asked by GET "
        f"{WORKS}?filter=updates%3A10.5555%2Fa.1%2Cupdates%3A10.5555%2Fz.9&rows=100&cursor=%2A: "
        "10.5555/z.9"
    )


def test_a_recorded_exchange_that_is_not_the_whole_answer_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    first = notice("10.5555/n.1", ("10.5555/a.1", "correction"))
    record(tmp_path, "a.json", "filter=updates:10.5555/a.1&rows=100", page([first], 7))
    record(tmp_path, "b.json", "filter=updates:10.5555/b.1&rows=100", page([], 0))
    with pytest.raises(ParseError) as caught:
        notices(tmp_path, ["10.5555/a.1", "10.5555/b.1"])
    assert caught.value.message == (
        f"the recorded exchange {tmp_path.name}/crossref/a.json cannot answer the Crossref "
        "notices of 10.5555/a.1: a Crossref answer that lists 1 of 7 notices: not the whole "
        "answer"
    )
