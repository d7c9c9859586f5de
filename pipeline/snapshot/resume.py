"""The resume cache: raw responses of an unfinished build, served again on the rerun.

``snapshots/<name>/.build-resume/<key>/`` holds one wrapper file per answered request (the
replay format of :mod:`pipeline.replay`), written as the answers arrive. A rerun of the same
spec in the same mode serves these instead of asking upstream again; a build that seals a
snapshot (complete or partial) deletes the folder. An answer the harvest counted as failed (a
body its parser rejected, a 4xx, an answer too empty to trust) is deleted at once
(:meth:`ResumeTransport.drop_unsettled`), so the rerun asks upstream again instead of failing the
same way. The key covers the spec hash and the mode (live, or which replay folders), so a
cache never leaks into a build that would have asked something else; a cache left untouched
for :data:`MAX_AGE_SECONDS` is stale (its answers are too old to pass for a fresh harvest) and
is deleted instead of served.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from pipeline.effects import effect
from pipeline.errors import ReplayMissError
from pipeline.network import key_url
from pipeline.replay import (
    RecordingTransport,
    ReplayKey,
    ReplayTransport,
    replay_key,
    wrapper_name,
)
from pipeline.settings import Settings

MAX_AGE_SECONDS = 24 * 3600
RESUME_DIR = ".build-resume"  # hidden, and ignored by git with the other .build-* entries


def resume_folder(corpus_dir: Path, spec_hash: str, replay: Sequence[Path]) -> Path:
    """The cache folder of one (spec, mode) pair."""
    mode = ["replay", *[str(p.resolve()) for p in replay]] if replay else ["live"]
    key = hashlib.sha256(json.dumps([spec_hash, mode]).encode("utf-8")).hexdigest()[:16]
    return corpus_dir / RESUME_DIR / key


def drop_if_stale(folder: Path, *, now: float | None = None) -> bool:
    """Delete ``folder`` when nothing was added to it for :data:`MAX_AGE_SECONDS`."""
    try:
        age = (time.time() if now is None else now) - folder.stat().st_mtime
    except FileNotFoundError:
        return False
    if age <= MAX_AGE_SECONDS:
        return False
    clear_resume(folder)
    return True


def clear_resume(folder: Path) -> None:
    """Delete one cache folder (and the ``.resume`` parent when it is left empty)."""
    shutil.rmtree(folder, ignore_errors=True)
    parent = folder.parent
    if parent.name == RESUME_DIR and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()


class ResumeTransport(httpx.BaseTransport):
    """Serves cached answers; asks ``inner`` for the rest and caches what it answers.

    Answers the retry policy would retry (429/5xx) are never cached, nor an answer that
    failed the bounds the client put on its request: its deadline, its size cap, its encoding
    (see :class:`~pipeline.replay.RecordingTransport`, which reads and writes the answers of
    ``inner``; the deadline holds while the body arrives, not once it is all in). The build
    calls :meth:`settle` whenever the
    harvest has taken the answers so far (a step done, records delivered) and
    :meth:`drop_unsettled` when a step failed: the answers since the last settle, the failed
    one among them, are deleted and never served again.
    """

    def __init__(
        self,
        inner: httpx.BaseTransport,
        folder: Path,
        *,
        max_bytes: int = Settings.max_response_bytes,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.offline = bool(getattr(inner, "offline", False))
        self._cache = ReplayTransport([folder])
        self._recorder = RecordingTransport(inner, folder, max_bytes=max_bytes)
        self.cached = len(self._cache)
        self.served = 0
        self._unsettled: dict[ReplayKey, Path] = {}  # answers since the last settle()
        self._never: set[ReplayKey] = set()  # not served again by this transport

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        body = request.content.decode("utf-8", "replace") if request.method != "GET" else None
        key = replay_key(request.method, key_url(request), body or None)
        # noted in the harvest's order, on its thread (a pipelined stage defers it)
        effect(self._unsettled.__setitem__, key, self.folder / wrapper_name(request, key))
        if self.cached and key not in self._never:
            try:
                response = self._cache.handle_request(request)
            except ReplayMissError:
                pass
            else:
                self.served += 1
                return response
        return self._recorder.handle_request(request)

    def settle(self) -> None:
        """The harvest took the answers so far: they stay cached."""
        self._unsettled.clear()

    def drop_unsettled(self) -> None:
        """A step failed: delete the answers since :meth:`settle` from the cache."""
        for key, path in self._unsettled.items():
            self._never.add(key)
            path.unlink(missing_ok=True)
        self._unsettled.clear()

    def close(self) -> None:
        self._recorder.close()
