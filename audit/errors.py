"""The error tree of citeseal.

Every error a person can cause or meet derives from :class:`CiteSealError`; the CLI boundary
catches it, prints ``error: <message>`` (plus advice when there is some) and exits with
``exit_code``. Anything else escaping is a bug and shows a traceback only with ``--verbose``.

    CiteSealError                       exit 2 unless stated
    ├── InputError                      bad input given by the user (file, option, text)
    │   ├── CitationSyntaxError         a handle or citation breaks the grammar (has a span)
    │   ├── LimitExceeded               an input exceeds a documented limit
    │   ├── NothingToAudit              an answer or claims file without sentences or citations
    │   ├── NotInSnapshot               a well-formed record id the snapshot does not hold
    │   └── DocumentError               a document does not read in its format (names the file)
    ├── KeyringError                    key missing, unreadable, too short, too open
    ├── CorpusError                     a snapshot cannot be opened or read
    └── (pipeline.errors)               HarvestError (transient/terminal), SnapshotError, …
"""

from __future__ import annotations

import codecs

from audit.terminal import caret_lines


class CiteSealError(Exception):
    """Base of every error that is reported to a person as one line."""

    exit_code: int = 2

    def __init__(self, message: str, *, advice: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.advice = advice

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        # keyword-only details (advice, caret positions) survive pickling, e.g. from the
        # snapshot writer process back to the build
        return (_restore, (type(self), self.args, dict(self.__dict__)))


def _restore(
    cls: type[CiteSealError], args: tuple[object, ...], state: dict[str, object]
) -> CiteSealError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class InputError(CiteSealError):
    """The user's input cannot be used as given."""


class CitationSyntaxError(InputError):
    """Text that should be a handle breaks the grammar.

    ``text`` is the offending text, ``start``/``end`` the span (in ``text``) of the part that
    failed, ``expected`` what the grammar wanted there.
    """

    def __init__(self, message: str, *, text: str, start: int, end: int, expected: str) -> None:
        super().__init__(message)
        self.text = text
        self.start = start
        self.end = end
        self.expected = expected

    def caret(self) -> str:
        """The text, safe to print, with a caret line under the failing span."""
        return "\n".join(caret_lines(self.text, self.start, self.end))


class LimitExceeded(InputError):
    """An input exceeds a documented limit (answer size, citations per sentence, quote size)."""


class NothingToAudit(InputError):
    """An answer holds nothing to judge (empty, no sentence, no claim): never a pass."""


class NotInSnapshot(InputError):
    """A well-formed record id names no record of the snapshot (the MCP code ``not_found``)."""


class DocumentError(InputError):
    """A document given to a reference check cannot be read in its format: the message names
    the file and the first problem (``refs.bib: line 5: …``, ``scan.pdf: no text layer``)."""


class KeyringError(CiteSealError):
    """The signing key cannot be loaded, created or used."""


class CorpusError(CiteSealError):
    """A snapshot cannot be opened or does not have the expected shape."""


def undecodable_offset(error: UnicodeDecodeError, data: bytes) -> int:
    """The offset in ``data`` of the byte a decode refused: ``utf-8-sig`` counts from after
    the byte order mark it strips (UTF-16 and UTF-32 count from the start)."""
    return error.start + (len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0)
