"""The served corpus warms in a thread: calls are answered before it ends, the same after it,
a failed warm-up leaves the server cold, and closing interrupts one still running."""

from __future__ import annotations

import logging
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from audit.duckdb_corpus import DuckDBCorpus
from audit.errors import CorpusError
from audit.handles import mint, parse_locator
from audit.warm import Warmth
from pipeline.serve import service
from pipeline.serve.served import Served
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.serve.conftest import DEMO

GENUINE = mint(DEMO, parse_locator("nct:NCT99000001@2025-01-15/trial.primary_outcome.1"))
ANSWER = f'The trial counts flares [{GENUINE} "Number of Farrow flares per participant"].\n'
KEEP_WARM = DuckDBCorpus.keep_warm


def report_of(served: Served) -> dict[str, Any]:
    report = service.audit(served, answer=ANSWER).value.model_dump(mode="json")
    return dict(report, created_at=None)


def test_calls_made_before_the_warm_up_ends_are_answered_as_after_it(
    demo_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def held(corpus: DuckDBCorpus, *args: Any, **kwargs: Any) -> Warmth:
        assert release.wait(30)
        return KEEP_WARM(corpus, *args, **kwargs)

    monkeypatch.setattr(DuckDBCorpus, "keep_warm", held)
    with Served(trust_snapshot(demo_pair[1], TRUST), DEMO) as served:
        assert not served.wait_warm(0.05)
        cold = report_of(served)  # answered while warming, through statements
        assert served.warmth is None
        release.set()
        assert served.wait_warm(30)
        warmth = served.warmth
        assert warmth is not None and warmth.records and warmth.passages
        warm = report_of(served)
    assert warm == cold
    assert cold["sentences"][0]["citations"][0]["verdict"] == "ok"


def test_the_warm_up_logs_what_it_holds(
    demo_pair: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    trusted = trust_snapshot(demo_pair[1], TRUST)
    with (
        caplog.at_level(logging.INFO, logger="citeseal.serve.warm"),
        Served(trusted, DEMO) as served,
    ):
        assert served.wait_warm(30)
        assert served.warmth is not None
        records = len(served.warmth.records or {})
        passages = sum(map(len, (served.warmth.passages or {}).values()))
    (line,) = [r.getMessage() for r in caplog.records if r.name == "citeseal.serve.warm"]
    assert records > 5 and passages > records
    assert re.fullmatch(
        rf"warm-up ended in \d+\.\d s: records and passages kept warm \({records} records, "
        rf"{passages} passages; about \d+ of 1024 MiB\)",
        line,
    ), line


def test_a_failed_warm_up_leaves_the_server_cold_and_says_so_in_one_line(
    demo_pair: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with Served(trust_snapshot(demo_pair[1], TRUST), DEMO) as served:
        assert served.wait_warm(30)
        expected = report_of(served)

    def broken(corpus: DuckDBCorpus, *args: Any, **kwargs: Any) -> Warmth:
        raise CorpusError("cannot read snapshot x.duckdb: IO Error: gone\nsecond line")

    monkeypatch.setattr(DuckDBCorpus, "keep_warm", broken)
    trusted = trust_snapshot(demo_pair[1], TRUST)
    with (
        caplog.at_level(logging.WARNING, logger="citeseal.serve.warm"),
        Served(trusted, DEMO) as served,
    ):
        assert served.wait_warm(30)
        assert served.warmth is None
        assert report_of(served) == expected  # cold, never wrong
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert line == (
        "not kept warm, every call looks its citations up: "
        "cannot read snapshot x.duckdb: IO Error: gone second line"
    )


def test_closing_interrupts_a_warm_up_still_reading(
    demo_pair: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = threading.Event()

    def endless(corpus: DuckDBCorpus, *args: Any, **kwargs: Any) -> Warmth:
        started.set()  # a read that takes hours, through the corpus's own connection
        corpus._fetch("SELECT count(*) FROM range(1000000000000) a(x) WHERE x % 7 = 3")
        raise AssertionError("not interrupted")

    monkeypatch.setattr(DuckDBCorpus, "keep_warm", endless)
    with caplog.at_level(logging.WARNING, logger="citeseal.serve.warm"):
        served = Served(trust_snapshot(demo_pair[1], TRUST), DEMO)
        assert started.wait(30)
        start = time.perf_counter()
        served.close()
        took = time.perf_counter() - start
    assert took < 10  # the read was cut, not waited out
    assert served.wait_warm(0)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # closing, not failing
