"""One background thread that runs a build's database work in order.

DuckDB releases the GIL while it executes, so while this thread inserts a batch the harvest
thread can already fetch and parse the next one. The queue is short (:data:`DEPTH`), so at
most a few batches are held in memory. An error in the thread is raised in the caller at
its next :meth:`Background.submit` or :meth:`Background.drain`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from types import TracebackType

DEPTH = 2


class Background:
    """Runs submitted callables one after another in a single thread (a context manager)."""

    def __init__(self, depth: int = DEPTH) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="snapshot-writer", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            task = self._queue.get()
            try:
                if task is None:
                    return
                if self._error is None and not self._cancelled.is_set():
                    task()
            except BaseException as error:  # noqa: BLE001 (handed to the caller's thread)
                self._error = error
            finally:
                self._queue.task_done()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def submit(self, task: Callable[[], None]) -> None:
        """Queue ``task`` (blocks while the queue is full); raises an earlier task's error."""
        self._raise()
        self._queue.put(task)

    def drain(self) -> None:
        """Wait until every queued task has run; raises the first error of one."""
        self._queue.join()
        self._raise()

    def close(self) -> None:
        """Stop after the running task (queued ones are dropped) and join the thread."""
        self._cancelled.set()
        self._queue.put(None)
        self._thread.join()

    def __enter__(self) -> Background:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
