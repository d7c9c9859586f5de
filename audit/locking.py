"""Exclusive advisory locks: the one mechanism behind every lock citeseal takes.

Three things take turns through it: snapshot builds of one corpus folder
(:func:`pipeline.snapshot.folder.corpus_lock`), site builds writing beside one folder
(:func:`pipeline.site.swap.exclusive`) and read-modify-write of a key file
(:func:`audit.keys.rotate_key_file`).

Rules:

- The lock is ``flock(2)`` on a descriptor: exclusive, advisory, released by the system when the
  descriptor closes or the process dies (``kill -9`` included), so a crash never leaves a stale
  lock behind.
- ``fcntl`` is imported here, lazily, and nowhere else: every module (the CLI included) imports
  on a platform without it (Windows).
- Where ``flock`` does not exist the lock **fails closed**: :func:`hold` and
  :func:`require_locks` raise :class:`LocksUnavailableError` (one line, exit 2) naming what
  needed the lock, rather than letting two writers overlap. Only the commands that write shared
  state need it (snapshot builds and the demo, site builds, key rotation); reading, auditing
  and rendering never lock.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType

from audit.errors import CiteSealError


class LocksUnavailableError(CiteSealError):
    """This platform has no ``flock`` (no ``fcntl`` module), and the command needs a lock."""


def _fcntl() -> ModuleType | None:
    """The ``fcntl`` module, or None where the platform has none."""
    try:
        return importlib.import_module("fcntl")
    except ImportError:
        return None


def require_locks(what: str) -> ModuleType:
    """The ``fcntl`` module; :class:`LocksUnavailableError` where it does not exist.

    ``what`` names the operation that needs the lock, for the message. Callers that must
    prepare something before they have a descriptor (open a folder) call this first, so they
    fail before touching anything.
    """
    fcntl = _fcntl()
    if fcntl is None:
        raise LocksUnavailableError(
            f"{what} needs an exclusive file lock, and this platform has no flock (fcntl)",
            advice="run this command on Linux or macOS",
        )
    return fcntl


@contextlib.contextmanager
def hold(descriptor: int, *, what: str, wait: bool) -> Iterator[bool]:
    """Hold an exclusive lock on the open ``descriptor`` for the block.

    Yields True while the lock is held; with ``wait=False`` it yields False at once (holding
    nothing) when another process holds it, and the caller says who. ``what`` names the
    operation for :class:`LocksUnavailableError`. The lock is released when the block ends.
    """
    fcntl = require_locks(what)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        yield False
        return
    try:
        yield True
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
