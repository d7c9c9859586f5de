"""The verified-digest cache: a digest is served again only while the file is unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from pipeline.snapshot import digests
from pipeline.snapshot.digests import MAX_ENTRIES, RACY_SECONDS, DigestCache, file_identity


def later() -> float:
    """A clock well past the racy window of any file a test just wrote."""
    return time.time() + 10 * RACY_SECONDS


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file the cache hashes (the cache's only expensive step), in order."""
    seen: list[Path] = []

    def counting(path: Path, *, chunk: int = 1 << 20) -> str:
        seen.append(path)
        return hashlib.sha256(path.read_bytes()).hexdigest()

    monkeypatch.setattr(digests, "sha256_file", counting)
    return seen


def make_file(tmp_path: Path, data: bytes = b"snapshot bytes") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "demo-20250101T000000Z.duckdb"
    path.write_bytes(data)
    return path


def test_an_unchanged_file_is_hashed_once(tmp_path: Path, hashed: list[Path]) -> None:
    path = make_file(tmp_path)
    cache = DigestCache(tmp_path / "data" / "digests.json", clock=later)
    first = cache.digest(path)
    assert [cache.digest(path) for _ in range(3)] == [first] * 3
    assert first == hashlib.sha256(b"snapshot bytes").hexdigest()
    assert (len(hashed), cache.hits, cache.misses) == (1, 3, 1)
    again = DigestCache(tmp_path / "data" / "digests.json", clock=later)
    assert again.digest(path) == first  # remembered across processes (the cache file)
    assert len(hashed) == 1


def test_any_write_makes_the_file_hashed_again_even_with_its_mtime_restored(
    tmp_path: Path, hashed: list[Path]
) -> None:
    path = make_file(tmp_path)
    cache = DigestCache(tmp_path / "digests.json", clock=later)
    cache.digest(path)
    stat = path.stat()
    path.write_bytes(b"snapshot BYTES")  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime put back: ctime moved
    assert cache.digest(path) == hashlib.sha256(b"snapshot BYTES").hexdigest()
    assert len(hashed) == 2


def test_a_file_put_in_its_place_is_hashed_again(tmp_path: Path, hashed: list[Path]) -> None:
    path = make_file(tmp_path)
    cache = DigestCache(tmp_path / "digests.json", clock=later)
    cache.digest(path)
    other = make_file(tmp_path / "elsewhere", b"other bytes!!!")
    other.replace(path)
    assert cache.digest(path) == hashlib.sha256(b"other bytes!!!").hexdigest()
    assert len(hashed) == 2


def test_a_file_changed_within_the_racy_window_is_not_remembered(
    tmp_path: Path, hashed: list[Path]
) -> None:
    path = make_file(tmp_path)
    changed = max(file_identity(path)[3], file_identity(path)[4]) / 1e9
    cache = DigestCache(tmp_path / "digests.json", clock=lambda: changed + RACY_SECONDS / 2)
    cache.digest(path)
    cache.digest(path)
    assert len(hashed) == 2  # the same tick could hide a second write
    assert not (tmp_path / "digests.json").exists()


def test_a_corrupt_cache_file_is_ignored_and_replaced(tmp_path: Path, hashed: list[Path]) -> None:
    path = make_file(tmp_path)
    store = tmp_path / "digests.json"
    expected = hashlib.sha256(b"snapshot bytes").hexdigest()
    junks = (b"{not json", b"[]", b'{"format": "other"}', b"\xff\xfe", b"[" * 100_000)
    for junk in junks:
        store.write_bytes(junk)
        assert DigestCache(store, clock=later).digest(path) == expected
    assert len(hashed) == len(junks)  # each junk cache was ignored, never trusted
    document = json.loads(store.read_text(encoding="utf-8"))
    assert document["format"] == "citeseal-digest-cache"
    assert list(document["entries"]) == [str(path.resolve())]


def test_a_forged_entry_for_another_identity_is_not_served(
    tmp_path: Path, hashed: list[Path]
) -> None:
    path = make_file(tmp_path)
    store = tmp_path / "digests.json"
    cache = DigestCache(store, clock=later)
    cache.digest(path)
    document = json.loads(store.read_text(encoding="utf-8"))
    entry = document["entries"][str(path.resolve())]
    entry["identity"][3] += 1  # an entry for a file with another mtime
    entry["sha256"] = "0" * 64
    store.write_text(json.dumps(document), encoding="utf-8")
    assert cache.digest(path) == hashlib.sha256(b"snapshot bytes").hexdigest()


def test_an_unwritable_data_dir_only_costs_the_hashing(tmp_path: Path, hashed: list[Path]) -> None:
    path = make_file(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data dir should be", encoding="utf-8")
    cache = DigestCache(blocker / "digests.json", clock=later)
    assert cache.digest(path) == cache.digest(path)
    assert len(hashed) == 2


def test_the_cache_keeps_the_entries_hashed_last(tmp_path: Path, hashed: list[Path]) -> None:
    moments = iter(range(10**6))
    cache = DigestCache(tmp_path / "digests.json", clock=lambda: later() + next(moments))
    files = []
    for n in range(MAX_ENTRIES + 2):
        path = tmp_path / "files" / f"f{n}.duckdb"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(str(n).encode())
        files.append(path)
        cache.digest(path)
    kept = json.loads((tmp_path / "digests.json").read_text(encoding="utf-8"))["entries"]
    assert len(kept) == MAX_ENTRIES
    assert str(files[0].resolve()) not in kept and str(files[-1].resolve()) in kept
