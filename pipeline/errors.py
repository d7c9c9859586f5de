"""Errors raised while moving data (extends the tree drawn in :mod:`audit.errors`).

CiteSealError (audit.errors)
├── ParseError                  a response body is not what its parser expects (exit 2)
├── HarvestError                a request could not be completed (exit 3)
│   ├── TransientHarvestError   429/5xx/transport, raised once the retry policy gives up
│   ├── TerminalHarvestError    4xx and other answers retrying cannot fix
│   ├── ReplayMissError         replay mode has no recorded exchange for a request
│   ├── SuspiciousAnswerError   an answer that would rewrite the lineage (empty where it
│   │                           holds records); those records are carried, not withdrawn
│   └── PartialHarvestError     requests failed, so the build sealed nothing (no
│                               --allow-partial), or a first build harvested nothing
├── SpecError                   a corpus spec is invalid (names the line and the key)
├── SnapshotError               a snapshot cannot be built, verified or read
│   └── TamperedSnapshotError   it fails a check against its sealed manifest (exit 1)
├── ArchiveError                an archive of snapshots cannot be reached or refuses (exit 3)
├── ScaleError                  citeseal scale cannot run (no Java, no PySpark, a Spark job
│                               failed) or a scale folder is not one
├── ServeError                  citeseal serve --http cannot listen (address taken, not here)
└── CallDeadlineError           an MCP tool call did not finish within its deadline (the
                                client gets deadline_exceeded; pipeline.serve.calls)
"""

from __future__ import annotations

from audit.errors import CiteSealError


class ParseError(CiteSealError):
    """A body cannot be parsed as the source it is said to come from."""


class HarvestError(CiteSealError):
    """A request to an upstream API failed."""

    exit_code = 3


class TransientHarvestError(HarvestError):
    """A failure that may pass (429, 5xx, timeouts); raised once the retry policy gives up."""


class TerminalHarvestError(HarvestError):
    """A failure that retrying cannot fix (4xx other than 429, a malformed answer)."""


class ReplayMissError(HarvestError):
    """Replay mode has no recorded exchange for the request."""


class SuspiciousAnswerError(HarvestError):
    """An answer that cannot be told from an outage: empty where the lineage holds records
    (no record for any id asked, an empty full text, a record without its passages).

    It is a listed failure of the build, never evidence that the records are gone: they are
    carried forward from the parent unchanged.
    """


class PartialHarvestError(HarvestError):
    """A build whose requests failed sealed nothing (``--allow-partial`` seals it marked
    partial), or a first build harvested no record at all."""


class SpecError(CiteSealError):
    """A corpus spec cannot be used."""


class SnapshotError(CiteSealError):
    """A snapshot cannot be built, verified or read."""


class TamperedSnapshotError(SnapshotError):
    """The snapshot file does not match its manifest."""

    exit_code = 1


class ArchiveError(CiteSealError):
    """An archive of sealed snapshots cannot be reached, or refuses what was asked."""

    exit_code = 3


class ScaleError(CiteSealError):
    """``citeseal scale`` cannot run here, its Spark job failed, or a folder given to it is
    not a complete scale folder (pipeline/scale)."""


class ServeError(CiteSealError):
    """``citeseal serve --http`` cannot listen where asked (address in use, not this host's)."""


class CallDeadlineError(CiteSealError):
    """An MCP tool call did not finish within its deadline (``CITESEAL_SERVE_DEADLINE``)."""
