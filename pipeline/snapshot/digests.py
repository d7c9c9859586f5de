"""The verified-digest cache: the sha256 of a snapshot file hashed before, while it is unchanged.

Checking a snapshot against its manifest before every use means hashing the whole file (a
50,000-record snapshot is about 180 MB). The cache remembers the digest of each file it hashed
together with the file's identity as the file system reports it::

    (device, inode, size, mtime_ns, ctime_ns)

and serves the digest again only while all five are unchanged. What it trusts:

* **the file system**: any write to a file, or putting another file in its place (rename,
  copy, restore from a backup), changes at least one of the five. Unprivileged users can set
  mtime (``touch -d``) but not ctime, which the kernel sets to the moment of every change;
* **the cache file**: it lives in the user's private data dir (``<data dir>/digests.json``,
  mode 0600), so whoever can rewrite it can rewrite the key file beside it too;
* **clock granularity**: a file changed within :data:`RACY_SECONDS` of being hashed could be
  changed again within the same timestamp tick, so such a digest is never remembered (git's
  "racily clean" rule). Very coarse file systems (FAT: 2 s) are covered by the same margin.

Only the digest is cached; the manifest and its seal are read and checked on every use.
A cache that cannot be read or written is ignored (the digest is then computed each time).
``CITESEAL_DIGEST_CACHE=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.snapshot.manifest import sha256_file

CACHE_FILE = "digests.json"
CACHE_FORMAT = "citeseal-digest-cache"
CACHE_VERSION = 1
MAX_ENTRIES = 256  # the entries hashed longest ago beyond this are forgotten
RACY_SECONDS = 3.0  # a file changed this recently is hashed but not remembered

Identity = tuple[int, int, int, int, int]


def file_identity(path: Path) -> Identity:
    """What the file system changes on every write to ``path`` or replacement of it."""
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class DigestCache:
    """sha256 digests of files, served again only while the file's identity is unchanged."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self.hits = 0
        self.misses = 0

    def digest(self, file: Path) -> str:
        """The sha256 of ``file``: remembered when unchanged since it was hashed, else computed."""
        key = str(file.resolve())
        before = file_identity(file)
        entries = self._load()
        entry = entries.get(key)
        if entry is not None and tuple(entry.get("identity", ())) == before:
            digest = entry.get("sha256")
            if isinstance(digest, str) and len(digest) == 64:
                self.hits += 1
                return digest
        self.misses += 1
        digest = sha256_file(file)
        after = file_identity(file)
        changed_at = max(after[3], after[4]) / 1e9
        if after == before and self._clock() - changed_at > RACY_SECONDS:
            entries[key] = {"identity": list(after), "sha256": digest, "hashed": self._clock()}
            self._store(entries)
        return digest

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            document = json.loads(self.path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return {}
        if (
            not isinstance(document, dict)
            or document.get("format") != CACHE_FORMAT
            or document.get("version") != CACHE_VERSION
            or not isinstance(document.get("entries"), dict)
        ):
            return {}
        return {k: v for k, v in document["entries"].items() if isinstance(v, dict)}

    def _store(self, entries: dict[str, dict[str, Any]]) -> None:
        """Write the entries (the :data:`MAX_ENTRIES` hashed last) atomically; failures are
        ignored."""
        kept = sorted(entries.items(), key=lambda item: -_number(item[1].get("hashed")))
        document = {
            "format": CACHE_FORMAT,
            "version": CACHE_VERSION,
            "entries": dict(kept[:MAX_ENTRIES]),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".digests-", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, indent=1)
            Path(temp).replace(self.path)
        except OSError:
            with contextlib.suppress(OSError):
                Path(temp).unlink()


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
