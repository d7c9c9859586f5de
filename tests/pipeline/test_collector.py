"""The garbage collector's pace for batch work: slower while open, as it was afterwards."""

from __future__ import annotations

import gc

import pytest

from pipeline.collector import GC_THRESHOLD, fewer_collections


def test_the_collector_runs_less_often_inside_and_as_before_afterwards() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        inside = gc.get_threshold()
        frozen = gc.get_freeze_count()
    assert inside == (GC_THRESHOLD, before[1], before[2])
    assert frozen > 0  # what was alive at the start is never scanned inside
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_an_error_inside_restores_the_collector_too() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError, match="boom"), fewer_collections(50):
        assert gc.get_threshold()[0] == 50
        raise RuntimeError("boom")
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, 0)
