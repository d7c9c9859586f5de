"""A build's database work, in a process of its own.

Why a process and not a thread: the DuckDB Python client takes the GIL between the steps of
every query (to check for Ctrl-C), so a writer *thread* waits for the GIL whenever the harvest
thread is parsing XML — on two cores the index work ran 2.5× slower than alone. A child
process has its own interpreter and GIL: the harvest process parses and stages batch files
while the writer process inserts and indexes the previous batches, each on its own core.

Protocol: the parent sends ``(kind, function, args, kwargs)`` over a pipe; ``function`` is
a module-level function whose first parameter is the DuckDB connection (pickled by
reference, so closures are refused). The child runs the messages one after another and
answers each with ``("ok", result)`` or ``("error", exception)``, in order.
:meth:`WriterProcess.submit` returns at once (at most :data:`DEPTH` messages are unanswered,
so a slow writer slows the harvest instead of piling up batch files);
:meth:`WriterProcess.call` waits for everything queued before it and returns its result. An
error is raised in the parent at the next ``submit``/``call``/``drain``, and the child skips
the work queued after it.

Memory: DuckDB keeps what it has read and written cached up to its memory limit and does not
give back some of it (spilled scratch space, allocator pages) until the database is closed.
:meth:`WriterProcess.reopen` closes and reopens the database (replaying the
:meth:`WriterProcess.configure` calls), so a build that reopens it every few thousand records
holds about the same memory whatever the size of the corpus.

The child is ``python -P -m pipeline.snapshot.writer`` started with :mod:`subprocess` (not
:mod:`multiprocessing`, whose ``spawn`` re-runs the caller's main script): it inherits the
environment and nothing else but its two pipe ends (settings such as the memory limit come
as arguments of the configure calls). ``-P`` and
``PYTHONPATH`` make it import the very ``pipeline`` package the parent runs: plain ``-m``
puts the current directory first on the path, so a build started in a folder holding
another ``pipeline`` package (a common name) ran that package's code in the writer.

Failure handling: the child ignores SIGINT (Ctrl-C is the parent's to handle; the parent
kills the child on any exception), and a watchdog thread exits the child the moment the
parent dies (``kill -9``), even in the middle of a statement, so a killed build never leaves
a writer running or holding the file.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import duckdb

from pipeline.errors import SnapshotError
from pipeline.snapshot.store import connect, first_line

DEPTH = 8  # unanswered messages at most (each batch message stands for ~10 MB of staged files)
T = TypeVar("T")
_STOP = "stop"
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding ``pipeline``


class WriterProcess:
    """A child process owning the one read-write connection to ``path`` (a context manager).

    Leaving the ``with`` block normally closes the connection and joins the child; leaving
    it with an exception kills the child first (its work is thrown away with the file).
    """

    def __init__(self, path: Path, *, depth: int = DEPTH) -> None:
        mine, theirs = socket.socketpair()
        alive_read, alive_write = os.pipe()
        paths = [_PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]
        try:
            self._process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
                [
                    sys.executable,
                    "-P",
                    "-m",
                    "pipeline.snapshot.writer",
                    str(theirs.fileno()),
                    str(alive_read),
                    str(path),
                ],
                pass_fds=(theirs.fileno(), alive_read),
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
            )
        except OSError as error:
            mine.close()
            os.close(alive_write)
            raise SnapshotError(f"cannot start the snapshot writer process: {error}") from None
        finally:
            theirs.close()
            os.close(alive_read)
        self._conn = Connection(mine.detach())
        self._alive = alive_write
        self._depth = depth
        self._pending = 0
        self._error: BaseException | None = None
        self.pid = self._process.pid

    # -- the parent's side ----------------------------------------------------------------------
    def submit(self, function: Callable[..., object], *args: object, **kwargs: object) -> None:
        """Queue ``function(con, *args, **kwargs)``; raises an earlier message's error."""
        self._queue(("call", function, args, kwargs))

    def configure(self, function: Callable[..., object], *args: object, **kwargs: object) -> None:
        """Queue a connection setting, run again after every :meth:`reopen`."""
        self._queue(("configure", function, args, kwargs))

    def reopen(self) -> None:
        """Queue a close and reopen of the database, which returns DuckDB's memory."""
        self._queue(("reopen", None, (), {}))

    def _queue(
        self,
        message: tuple[str, Callable[..., object] | None, tuple[object, ...], dict[str, object]],
    ) -> None:
        while self._pending >= self._depth:
            self._receive()
        self._raise()
        self._send(message)

    def call(self, function: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Run ``function(con, *args, **kwargs)`` after everything queued; return its result."""
        self.submit(function, *args, **kwargs)
        result: Any = None
        while self._pending:
            result = self._receive()
        self._raise()
        return result

    def drain(self) -> None:
        """Wait until every queued message has run; raises the first error of one."""
        while self._pending:
            self._receive()
        self._raise()

    def close(self) -> None:
        """Close the connection (after the queued work) and join the child."""
        try:
            self.drain()
            self._send(_STOP)
            self._receive()
            self._raise()
            with contextlib.suppress(subprocess.TimeoutExpired):  # closed: kill() may end it
                self._process.wait(timeout=60)
        finally:
            self.kill()

    def kill(self) -> None:
        """Stop the child at once (SIGKILL, unless it has exited) and reap it."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        if not self._conn.closed:
            self._conn.close()
            os.close(self._alive)

    def _send(self, message: object) -> None:
        try:
            self._conn.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._died() from None
        self._pending += 1

    def _receive(self) -> Any:
        try:
            status, value = self._conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            raise self._died() from None
        self._pending -= 1
        if status == "error" and self._error is None:
            self._error = value
        return value if status == "ok" else None

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _died(self) -> SnapshotError:
        try:
            code = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return SnapshotError(
            f"the snapshot writer process stopped unexpectedly ({how})",
            advice="run the build again; it resumes from the responses already fetched",
        )

    def __enter__(self) -> WriterProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.kill()


# -- the child's side ------------------------------------------------------------------------
def _serve(path: str, conn: Connection, alive: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(alive,), name="parent-watch", daemon=True).start()
    settings: list[tuple[Callable[..., object], tuple[object, ...], dict[str, object]]] = []
    con: duckdb.DuckDBPyConnection | None = None
    failure: BaseException | None = None  # answered once, then the rest is skipped
    try:
        con = connect(Path(path))
    except BaseException as error:  # noqa: BLE001 (every failure goes back to the parent)
        failure = error
    failed = False
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break  # the parent went away
        if message == _STOP:
            if con is not None:
                con.close()
            conn.send(("ok", None))
            break
        if failed or failure is not None or con is None:
            if failure is not None:
                _answer_error(conn, failure)
                failure = None
            else:
                conn.send(("skipped", None))
            failed = True
            continue
        kind, function, args, kwargs = message
        try:
            if kind == "reopen":
                con.close()
                con = connect(Path(path))
                for setting, setting_args, setting_kwargs in settings:
                    setting(con, *setting_args, **setting_kwargs)
                result = None
            else:
                result = function(con, *args, **kwargs)
                if kind == "configure":
                    settings.append((function, args, kwargs))
        except BaseException as error:  # noqa: BLE001 (every failure goes back to the parent)
            failed = True
            _answer_error(conn, error)
            continue
        conn.send(("ok", result))
    conn.close()


def _answer_error(conn: Connection, error: BaseException) -> None:
    """Send ``error`` to the parent as itself when it survives pickling, else as text."""
    sendable: BaseException
    try:
        sendable = pickle.loads(pickle.dumps(error))  # noqa: S301 (our own bytes)
    except Exception:  # noqa: BLE001 (any unpicklable error is reported as text)
        sendable = SnapshotError(f"snapshot writer: {type(error).__name__}: {first_line(error)}")
    if isinstance(error, duckdb.Error) and not isinstance(error, SnapshotError):
        sendable = SnapshotError(f"snapshot database error: {first_line(error)}")
    conn.send(("error", sendable))


def _watch(alive: int) -> None:
    """Exit the child when the parent's end of the ``alive`` pipe closes (the parent died)."""
    with contextlib.suppress(OSError):
        while os.read(alive, 1):
            pass
    os._exit(70)


if __name__ == "__main__":
    _serve(sys.argv[3], Connection(int(sys.argv[1])), int(sys.argv[2]))
