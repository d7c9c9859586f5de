"""Fixtures for the archive tests: the demo pair of snapshots (sealed with the test key)."""

from tests.pipeline.snapshot.conftest import demo_pair

__all__ = ["demo_pair"]
