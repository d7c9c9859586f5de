"""The snapshot every tool reads: :class:`Served` (its connections and the ``--online`` hooks).

Connections: one read-only base connection is opened when the server starts; every call
reads through its own cursor of it (``base.cursor()``, DuckDB's way to use one database from
several threads) and first checks that the file is still the one that was trusted. Measured on
the demo snapshot: a cursor costs ~0.01 ms, while opening a connection per call costs ~175 ms
when none stays open (the database is re-attached each time) and a second connection with
another configuration is refused by DuckDB in the same process — the audit's corpus therefore
reads through a cursor too. No call holds a lock while it runs.

What the audits look up is read once, in a thread started with the server: every record and
every passage (:meth:`DuckDBCorpus.keep_warm`, :mod:`audit.warm`), within a memory budget
(1 GiB; a tier over it is looked up per call, and what the calls look up is kept for later
calls, :mod:`audit.lookup_cache`). The server answers while it warms (about 6 s on a million
passages): a call made before the warm-up ends looks up what it cites through statements, as a
cold server does, and a call made after reads memory; the warm-up's outcome is logged once. A
warm-up that fails leaves the server cold, never wrong. The file is checked unchanged before
each call reads anything and once more when the warm-up ends (a change drops what was read),
so what the server read of it is what this call would read. ``--online`` reads every call's
head through statements (its children are sealed while it serves).

Two hooks do nothing here: :meth:`Served.ensure_records` (before a fetch) and
:meth:`Served.ensure_search` (after a search). With ``--online``
(:class:`pipeline.serve.online.LiveServed`) they harvest what the snapshot lacks into a sealed
child, and every call reads the newest one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import duckdb

from audit.duckdb_corpus import DuckDBCorpus
from audit.keys import Keyring
from audit.lookup_cache import LookupCache
from audit.terminal import one_line
from audit.warm import Warmth
from pipeline.snapshot.trust import TrustedSnapshot

log = logging.getLogger("citeseal.serve.warm")  # the warm-up's lines

SERVED_CHANGE = {
    "since": "since the server trusted it",
    "advice": "restart citeseal serve once nothing is writing the file",
}
"""How a served snapshot that changed is refused: trusted at start, a retry cannot help."""


class Served:
    """What every tool reads: the snapshot that passed its checks, the minting keyring, and
    the base connection every call takes its own cursor of (close it with :meth:`close`)."""

    online = False  # True: calls may harvest live (pipeline.serve.online.LiveServed)
    _closing = False

    def __init__(self, trusted: TrustedSnapshot, keyring: Keyring) -> None:
        self.trusted = trusted
        self.keyring = keyring
        self._base = trusted.search_connection()
        self._lock = threading.Lock()
        # Checked and read once (shape, meta, source statuses); each call reads through its
        # own cursor (:meth:`corpus`), and what the calls look up is kept for the next ones.
        self._own = self._base.cursor()  # the base corpus's: the warm-up's alone after this
        self._corpus = DuckDBCorpus(
            trusted.path, sha256=trusted.sha256, connection=self._own, cache=LookupCache()
        )
        self._corpus.source_status()  # now, before calls on several threads share it
        self.warmth: Warmth | None = None  # what the warm-up holds, once it has ended
        self._warmed = threading.Event()
        self._warming: threading.Thread | None = None
        if self.online:  # the head changes with --online: not held
            self._warmed.set()
        else:
            self._warming = threading.Thread(
                target=self._warm_up, name="citeseal-serve-warm-up", daemon=True
            )
            self._warming.start()

    def _warm_up(self) -> None:
        """Keep the corpus warm through the base corpus's own connection (no call uses it)
        and log what it holds; a failure leaves the server cold (every call looks up what it
        cites through statements, as before) and is logged as one line. Calls check the file
        unchanged before they read anything, warm or not: what this read of a file that
        changed since it was trusted is never served."""
        start = time.perf_counter()
        try:
            warmth = self._corpus.keep_warm()
        except Exception as error:  # noqa: BLE001 (cold is safe: every call looks up, as before)
            if not self._closing:  # close() interrupted it
                what = one_line(str(error)) or type(error).__name__
                log.warning("not kept warm, every call looks its citations up: %s", what)
        else:
            self.warmth = warmth
            records = len(warmth.records or ())
            passages = sum(len(held) for held in (warmth.passages or {}).values())
            log.info(
                "warm-up ended in %.1f s: %s (%s records, %s passages; about %.0f of %.0f MiB)",
                time.perf_counter() - start,
                warmth.note,
                f"{records:,}",
                f"{passages:,}",
                warmth.estimate / 2**20,
                warmth.budget / 2**20,
            )
        finally:
            self._warmed.set()

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait until the warm-up has ended (held, cold or failed); False on ``timeout``."""
        return self._warmed.wait(timeout)

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor for one call, after checking the file did not change since it was trusted."""
        with self._lock:  # creating a cursor touches the base connection; using it does not
            cursor = self._base.cursor()
        try:
            self.trusted.still_unchanged(**SERVED_CHANGE)
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def corpus(self) -> Iterator[DuckDBCorpus]:
        """The audit's corpus for one call, reading through its own cursor (what the served
        snapshot's corpus read when the server started is not read again)."""
        with self.cursor() as cursor:
            yield self._corpus.reading_through(cursor)

    def ensure_records(self, record_ids: Sequence[str]) -> None:
        """Before a fetch: nothing (``--online`` harvests the ids the snapshot lacks,
        :class:`pipeline.serve.online.LiveServed`)."""
        del record_ids

    def ensure_search(self, query: str, limit: int, sources: Sequence[str], found: int) -> bool:
        """After a search that found ``found`` passages: nothing, False (``--online`` may
        harvest the query and answer True: search again)."""
        del query, limit, sources, found
        return False

    def close(self) -> None:
        """Close the connections; a warm-up still running is interrupted and waited for
        first (it reads through one of them)."""
        self._closing = True
        while self._warming is not None and self._warming.is_alive():
            self._own.interrupt()  # again until it ends: one sent between two reads is lost
            self._warming.join(0.1)
        self._corpus.close()
        self._base.close()

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
