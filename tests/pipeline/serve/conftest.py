"""Fixtures of the MCP server tests: the demo pair served in memory with the demo key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.keys import Keyring
from pipeline.serve.service import Served
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST

DEMO = Keyring.demo_keyring()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def served(demo_pair: tuple[Path, Path]) -> Iterator[Served]:
    """The newest demo snapshot (sealed with the test key), handles minted with the demo key."""
    with Served(trust_snapshot(demo_pair[1], TRUST), DEMO) as value:
        yield value
