"""One tool call's failure, deadline and log line: pure rules, no SDK (docs/serve.md, "Errors").

Rules:

* **Stable codes.** Every failed call is one of :data:`CODES`, with a ``retryable`` flag and a
  hint, chosen by :data:`FAILURES`, the one table from the project's error tree
  (:mod:`audit.errors`, :mod:`pipeline.errors`) to codes: the first row whose class the error
  is an instance of wins, so a subclass is listed before its base. A project error keeps its
  one-line message and advice (the advice is the hint; without one, the row's hint). Anything
  else is ``internal``: its text is never shown (it may hold a path, a value, a secret); the
  message carries a reference that the server's log line (stderr, with the traceback,
  redacted by :mod:`pipeline.serve.logs`) carries too.
* **Deadlines.** Each call has a deadline (:class:`CallDeadline`: ``CITESEAL_SERVE_DEADLINE``,
  default :data:`DEFAULT_CALL_DEADLINE` seconds). A call that has not ended by then is answered
  ``deadline_exceeded`` (retryable) at once, and whatever it returns later is discarded and
  logged, never delivered: late work is not delivered. The deadline is visible to the call's
  code through :func:`call_deadline` (a context variable, copied into the worker thread of a
  sync tool), so ``--online`` live harvests stop asking upstream when it passes
  (:mod:`pipeline.serve.online`).
* **Logs.** :func:`log_call` writes one line per call to the ``citeseal.serve.call`` logger
  with the tool's name, duration and code (never its arguments: they are the caller's data).
"""

from __future__ import annotations

import contextvars
import logging
import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

from audit.errors import CiteSealError, InputError, NotInSnapshot
from audit.terminal import one_line
from pipeline.errors import (
    ArchiveError,
    CallDeadlineError,
    HarvestError,
    ParseError,
    ReplayMissError,
    TerminalHarvestError,
)

log = logging.getLogger("citeseal.serve.call")

CODES = ("invalid_input", "not_found", "upstream_unavailable", "deadline_exceeded", "internal")
DEFAULT_CALL_DEADLINE = 30.0
"""Seconds one tool call may take (``CITESEAL_SERVE_DEADLINE``)."""

HINTS = {
    "invalid_input": "correct the argument the message names and call again",
    "not_found": "search, or call fetch_passages with a record id a result gave",
    "upstream_unavailable": "retry later (the call may be repeated)",
    "deadline_exceeded": "retry, or ask for less (fewer ids, a smaller limit, a shorter text)",
    "internal": "not the caller's fault and not retryable as is; report it with this reference",
}

FAILURES: tuple[tuple[type[BaseException], str, bool], ...] = (
    (CallDeadlineError, "deadline_exceeded", True),
    (NotInSnapshot, "not_found", False),
    (InputError, "invalid_input", False),
    (ReplayMissError, "upstream_unavailable", False),
    (TerminalHarvestError, "upstream_unavailable", False),
    (HarvestError, "upstream_unavailable", True),  # transient, partial, suspicious answers
    (ArchiveError, "upstream_unavailable", True),
    (ParseError, "upstream_unavailable", False),
    (CiteSealError, "internal", False),  # snapshot changed since trusted, key, corpus, spec
)
"""The project's error tree → (code, retryable); the first matching row wins."""


@dataclass(frozen=True)
class Failure:
    """A failed call as the client reads it."""

    code: str
    retryable: bool
    message: str
    hint: str  # the error's advice, else the code's hint (HINTS)
    advised: bool = False  # the hint is the error's own advice: the text block shows it too

    def structured(self) -> dict[str, Any]:
        """The ``structuredContent`` of the ``isError`` result."""
        return {
            "error": {
                "code": self.code,
                "retryable": self.retryable,
                "message": self.message,
                "hint": self.hint,
            }
        }

    def text(self, tool: str) -> str:
        """The text block: ``Error executing tool NAME: MESSAGE`` (then ``; hint: ADVICE`` when
        the error gave advice), as before codes existed: clients that read only the text
        keep reading the same line."""
        hint = f"; hint: {self.hint}" if self.advised else ""
        return f"Error executing tool {tool}: {self.message}{hint}"


def failure_of(error: CiteSealError) -> Failure:
    """The row of :data:`FAILURES` for a project error, with its message and advice."""
    for kind, code, retryable in FAILURES:
        if isinstance(error, kind):
            hint = one_line(error.advice) if error.advice else HINTS[code]
            return Failure(code, retryable, one_line(error.message), hint, bool(error.advice))
    raise AssertionError("CiteSealError is the table's last row")  # pragma: no cover


def invalid_input(message: str) -> Failure:
    """An argument the SDK refused (wrong type or name, an unknown tool)."""
    return Failure("invalid_input", False, one_line(message), HINTS["invalid_input"])


def internal(reference: str) -> Failure:
    """An unexpected exception: nothing of its text, a reference into the server's log."""
    return Failure(
        "internal",
        False,
        f"internal error (reference {reference}; the server's log has the details)",
        HINTS["internal"],
    )


def new_reference() -> str:
    """A short random reference tying an internal error to its log line."""
    return secrets.token_hex(4)


def deadline_exceeded(seconds: float) -> Failure:
    return failure_of(
        CallDeadlineError(
            f"the call did not finish within its deadline of {seconds:g} s; nothing it did "
            "after that is returned",
            advice=HINTS["deadline_exceeded"],
        )
    )


# -- the deadline ------------------------------------------------------------------------------
_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("citeseal_call_deadline")


def call_deadline() -> float:
    """The running call's deadline (``time.monotonic()``), or infinity outside a call."""
    return _DEADLINE.get(math.inf)


@dataclass(frozen=True)
class CallDeadline:
    """Seconds each call may take; :meth:`start` sets the running call's deadline."""

    seconds: float = DEFAULT_CALL_DEADLINE

    def start(self) -> tuple[float, contextvars.Token[float]]:
        deadline = time.monotonic() + self.seconds
        return deadline, _DEADLINE.set(deadline)

    @staticmethod
    def stop(token: contextvars.Token[float]) -> None:
        _DEADLINE.reset(token)


# -- the log line ------------------------------------------------------------------------------
def log_call(tool: str, started: float, failure: Failure | None, *, late: bool = False) -> None:
    """One line per call: ``TOOL CODE in MS ms`` with ``tool``, ``duration_ms``, ``code``."""
    duration = round((time.monotonic() - started) * 1000, 1)
    code = failure.code if failure is not None else "ok"
    level = logging.INFO
    if failure is not None:
        level = logging.ERROR if failure.code == "internal" else logging.WARNING
    what = "late result discarded" if late else code
    log.log(
        level,
        "%s %s in %.1f ms",
        tool,
        what,
        duration,
        extra={"tool": tool, "duration_ms": duration, "code": code},
    )
