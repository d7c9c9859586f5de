"""Fixtures of the scale tests: one Spark session (local mode) for the whole test session, a
generated baseline with an update file, and what ``snapshot build`` and ``scale`` make of it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.scale.generate import Generated, generate_baseline
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.conftest import TEST_KEYRING

SPARK_CONF = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one Spark session of the tests (``local[2]``, no UI, loopback only); the tests
    skip, saying why, where Java or PySpark cannot be had."""
    from pipeline.scale.ingest import java_missing, spark_session

    why = java_missing()
    if why is not None:
        pytest.skip(f"Spark cannot run here: {why}")
    with spark_session("local[2]", SPARK_CONF) as session:
        yield session


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    """A generated baseline of 90 records in 3 files and one update file (revisions, new
    records, a deletion, a new retraction), under ``corpus/in`` beside the spec files."""
    return generate_baseline(tmp_path_factory.mktemp("corpus") / "in", 90, files=3, updates=1)


def _offline(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"a build over files asked the network: {request.url}")


def write_spec(folder: Path, name: str, updates: bool) -> Path:
    spec = folder / f"{name}.toml"
    table = 'baseline = "in/baseline"' + ('\nupdates = "in/updates"' if updates else "")
    spec.write_text(f'name = "{name}"\n\n[pubmed]\n{table}\n', encoding="utf-8")
    return spec


def build(spec: Path, *, parent: bool) -> Path:
    result = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        parent="latest" if parent else None,
        new_lineage=not parent,
        settings=Settings(),
        resume=False,
        transport=httpx.MockTransport(_offline),
    )
    return result.path


@dataclass(frozen=True)
class Lineage:
    first: Path  # snapshot build over the baseline
    second: Path  # its child over the baseline and the update file


@pytest.fixture(scope="session")
def lineage(generated: Generated) -> Lineage:
    """``snapshot build`` over the generated files as a lineage would take them: the baseline,
    then (a child) the baseline with the update file."""
    folder = generated.baseline.parent.parent
    first = build(write_spec(folder, "files", updates=False), parent=False)
    second = build(write_spec(folder, "files", updates=True), parent=True)
    return Lineage(first, second)


@pytest.fixture(scope="session")
def scale_folder(
    spark: Any, generated: Generated, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """``scale ingest`` of the same files (on the session's Spark)."""
    from pipeline.scale.ingest import ingest

    del spark  # the active session is the one ingest runs on
    out = tmp_path_factory.mktemp("scale") / "pubmed-parquet"
    return ingest(generated.baseline, generated.updates, out, name="files").out


@pytest.fixture(scope="session")
def scale_snapshot(scale_folder: Path) -> Path:
    """``scale snapshot`` of that folder, sealed with the test key."""
    from pipeline.scale.snapshot import build_from_folder

    out = scale_folder.parent / "big" / "files-big.duckdb"
    return build_from_folder(scale_folder, out, keyring=TEST_KEYRING, settings=Settings()).path
