"""The logs of ``citeseal serve``: stderr only, text or JSON lines, secrets redacted.

Rules (docs/serve.md, "Logs"):

* Every log line goes to **stderr**: stdout is the stdio transport, where one stray byte breaks
  the client. :func:`configure` installs one handler on the root logger (the SDK's, uvicorn's
  and ours all reach it), at the level ``--log-level`` names (default :data:`DEFAULT_LEVEL`:
  the one line per call, at ``info``, shows only when asked for).
* ``--log-format json`` writes **one JSON object per line** (:class:`JsonLines`): ``time``
  (UTC, ISO 8601, milliseconds), ``level``, ``logger``, ``message``, and for a tool call its
  ``tool``, ``duration_ms`` and ``code`` (:func:`pipeline.serve.calls.log_call`); an exception
  is its ``exception`` field. JSON escapes every line break, so a message never spans lines.
* **Secrets never logged.** Each line (message and traceback alike, in both formats) passes
  through :class:`pipeline.redact.Redactor` with the settings' secrets (API keys, the serve
  token, proxy credentials) and the contact e-mail, as the harvester's log lines do.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import IO, Any

from audit.errors import InputError
from pipeline.redact import Redactor

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
FORMATS = ("text", "json")
DEFAULT_LEVEL = "warning"
DEFAULT_FORMAT = "text"
CALL_FIELDS = ("tool", "duration_ms", "code")
"""The fields :func:`pipeline.serve.calls.log_call` adds to a call's line."""
_HANDLER = "citeseal-serve"


def check_choice(option: str, value: str, allowed: Iterable[str]) -> str:
    """``value`` when it is one of ``allowed``, else one :class:`InputError` line."""
    choices = list(allowed)
    if value not in choices:
        raise InputError(f"{option} must be one of {', '.join(choices)}, got {value!r}")
    return value


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message (+ call fields, exception)."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": self.redact(record.getMessage()),
        }
        for name in CALL_FIELDS:
            if name in record.__dict__:
                entry[name] = record.__dict__[name]
        if record.exc_info:
            entry["exception"] = self.redact(self.formatException(record.exc_info))
        return json.dumps(entry)


class RedactedText(logging.Formatter):
    """``TIME LEVEL LOGGER: MESSAGE`` (then the traceback), redacted."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(super().format(record))


def configure(
    level: str = DEFAULT_LEVEL,
    fmt: str = DEFAULT_FORMAT,
    secrets: Iterable[str | None] = (),
    stream: IO[str] | None = None,
) -> logging.Handler:
    """Send every log record at ``level`` or above to ``stream`` (stderr) in ``fmt``; replaces
    the handler a previous call installed. Returns the handler (tests remove it)."""
    redact = Redactor(secrets)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.set_name(_HANDLER)
    handler.setFormatter(JsonLines(redact) if fmt == "json" else RedactedText(redact))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LEVELS[level])
    return handler
