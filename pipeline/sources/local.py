"""The user's own documents as a source: a folder of PDF, Markdown and text files → ``local:``.

A corpus spec names the folder, relative to the spec file::

    [local]
    folder = "my-documents"      # relative to the spec; an absolute path is refused
    licence = "unknown"          # every record's licence: CC-BY-4.0, public-domain, a URL …

The harvest reads the files instead of asking an API: one step per file, so each file that
cannot be read is one listed failure naming it, and the others are ingested.

* **Which files.** Every file under the folder, in sorted order, subfolders included:
  ``.pdf`` (the text layer, :func:`audit.references.inputs.pdf_pages`), ``.md`` and
  ``.markdown`` (Markdown), ``.txt`` (plain text); suffixes in any case. Hidden entries (a
  name starting with ``.``: ``.git``, ``.DS_Store``) are not documents and are passed over.
  Anything else is a listed failure: a file of another type, a symbolic link (never followed,
  so nothing outside the folder is read), a file over ``max_file_bytes``, an unreadable file,
  a PDF that is encrypted, broken or without a text layer, a text file that is not UTF-8 or
  holds a NUL byte, a document without any text, a path whose id would be too long, two files
  whose names differ only in Unicode normalisation. Never a silent drop, never a crash.
* **Records.** ``local:<id>`` where the id is the file's path relative to the folder,
  ``%XX``-encoded (:mod:`audit.local_ids`), so it is the same on every rebuild and machine
  and holds nothing above the folder (no home directory). The record version is the first 12
  hex digits of the sha256 of the file's bytes, and handles pin it
  (``local:report-2024.pdf@3f9a0c1b2d4e/page.12~…``): a file that changes is a new version,
  and a handle minted before keeps verifying against the text it was minted from, flagged
  ``version_changed`` by the audit. Passage paths: :mod:`pipeline.sources.local_text`.
  ``metadata`` holds ``file`` (the relative path), ``format``, ``bytes``, ``sha256``,
  ``licence`` and ``segmentation``. Flags stay unknown.
* **A file gone from the folder is withdrawn.** Besides its steps, the folder gives the
  harvest its complete :class:`~pipeline.sources.base.Listing`: the id of every entry found,
  read or not. A record of the lineage whose file is no longer in the folder is withdrawn
  by the next build (its handles then verify ``withdrawn``); one whose file is there but
  failed this time (unreadable, not UTF-8, replaced by a link …) is a listed failure and
  keeps its last version, never withdrawn. A folder or subfolder that cannot be listed
  gives no listing at all (its failure is listed): nothing of the folder is withdrawn then.
  ``snapshot rebuild`` re-reads no file (the stored spec knows no folder), so local records
  are carried unchanged.

Reading files is the I/O of this source; the segmentation into passages is pure.
"""

from __future__ import annotations

import hashlib
import os
import stat
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from audit.errors import DocumentError, undecodable_offset
from audit.licences import LOCAL_LICENCE, cut, normalise
from audit.local_ids import MAX_LOCAL_ID_CHARS, encode_local_id
from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.records import Flags, ParseResult, Record
from pipeline.sources.base import Listing, Plugin, Search
from pipeline.sources.local_text import (
    LOCAL_SEGMENTATION,
    markdown_passages,
    pdf_passages,
    text_passages,
)
from pipeline.sources.spec_types import Strict, relative_folder

NAME = "local"
FORMATS = {".pdf": "pdf", ".md": "markdown", ".markdown": "markdown", ".txt": "text"}
DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024
VERSION_DIGITS = 12  # hex digits of the file's sha256 that name its version
SPEC_DIR = "spec_dir"  # the validation context key: the folder of the spec file


class LocalSpec(Strict):
    """The ``[local]`` table of a corpus spec (module docstring)."""

    folder: str = Field(min_length=1)
    licence: str = Field(default=LOCAL_LICENCE, min_length=1, max_length=200)
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, ge=1, le=1024**3, strict=True)
    _root: Path | None = PrivateAttr(default=None)

    @field_validator("folder")
    @classmethod
    def _relative(cls, value: str) -> str:
        return relative_folder(value)

    @model_validator(mode="after")
    def _locate(self, info: ValidationInfo) -> LocalSpec:
        spec_dir = (info.context or {}).get(SPEC_DIR)
        if isinstance(spec_dir, Path):
            self._root = spec_dir / self.folder
        return self

    @property
    def root(self) -> Path | None:
        """The folder on disk; None for a spec read back from a snapshot (nothing is read)."""
        return self._root


# -- the folder --------------------------------------------------------------------------------


def _failing(error: Exception) -> Callable[[Any], Sequence[Record]]:
    def run(_client: Any) -> Sequence[Record]:
        raise error

    return run


def _reading(root: Path, relative: str, spec: LocalSpec) -> Callable[[Any], Sequence[Record]]:
    return lambda _client: [read_document(root, relative, spec)]


def searches(spec: LocalSpec) -> list[Search]:
    """One step per file of the folder, then its listing when the whole folder could be
    listed (module docstring); a folder that cannot be listed is one failing step."""
    root = spec.root
    if root is None:
        return []
    shown = f"folder {spec.folder}"
    try:
        listed, complete = walk_folder(root)
    except OSError as error:
        why = "does not exist" if isinstance(error, FileNotFoundError) else "cannot be read"
        detail = f" ({error.strerror})" if error.strerror and why != "does not exist" else ""
        failure = TerminalHarvestError(
            f"the [local] folder {spec.folder!r} (relative to the spec) {why}{detail}"
        )
        return [Search(shown, spec.folder, _failing(failure))]
    steps: list[Search] = []
    ids: dict[str, str] = {}
    for relative, problem in listed:
        step = "read"
        ident = encode_local_id(relative)
        if problem is None and ident in ids:
            problem = (
                f"{relative}: the same name as {ids[ident]} in another Unicode normalisation "
                "(one id for both); rename one"
            )
        if problem is None and len(ident) > MAX_LOCAL_ID_CHARS:
            problem = (
                f"{relative}: its path makes an id of {len(ident)} characters (at most "
                f"{MAX_LOCAL_ID_CHARS}); move it to a shorter path"
            )
        ids.setdefault(ident, relative)
        run = _reading(root, relative, spec) if problem is None else _failing(ParseError(problem))
        steps.append(Search(step, relative, run))
    if complete:
        listing = Listing(frozenset(f"{NAME}:{ident}" for ident in ids))
        steps.append(Search("listing", shown, lambda _client: listing, lists=True))
    return steps


def list_folder(root: Path) -> list[tuple[str, str | None]]:
    """Every entry of ``root`` that is not hidden, recursively and sorted: its relative path
    (``/`` between folders) and why it cannot be ingested (None: it is a document to read).
    Raises OSError when ``root`` itself cannot be listed."""
    return walk_folder(root)[0]


def walk_folder(root: Path) -> tuple[list[tuple[str, str | None]], bool]:
    """:func:`list_folder`, and whether the listing is complete (every subfolder could be
    listed, so a file not in it is not in the folder)."""
    if not root.is_dir():
        if root.exists():
            raise NotADirectoryError(20, "not a folder")
        raise FileNotFoundError(2, "does not exist")
    found: list[tuple[str, str | None]] = []
    unlisted: list[str] = []

    def walk(folder: Path, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as error:
            where = prefix.rstrip("/") or "."
            found.append((where, f"{where}: the folder cannot be listed ({error.strerror})"))
            unlisted.append(where)
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            relative = prefix + entry.name
            if entry.is_symlink():
                found.append((relative, f"{relative}: a symbolic link; links are not followed"))
            elif entry.is_dir(follow_symlinks=False):
                walk(Path(entry.path), relative + "/")
            elif not entry.is_file(follow_symlinks=False):
                found.append((relative, f"{relative}: not a regular file"))
            elif Path(entry.name).suffix.lower() not in FORMATS:
                found.append((relative, f"{relative}: {_unsupported(entry.name)}"))
            else:
                found.append((relative, None))

    walk(root, "")
    return found, not unlisted


def _unsupported(name: str) -> str:
    suffix = Path(name).suffix
    what = repr(suffix) if suffix else "no suffix"
    kinds = ", ".join(FORMATS)
    return f"not a document type citeseal reads ({what}; the [local] source reads {kinds})"


# -- one file ----------------------------------------------------------------------------------


def read_document(root: Path, relative: str, spec: LocalSpec) -> Record:
    """The ``local:`` record of the file at ``relative`` under ``root``."""
    data = _read_bounded(root / relative, relative, spec.max_file_bytes)
    return document_record(relative, data, licence=spec.licence)


def _read_bounded(path: Path, relative: str, limit: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise TerminalHarvestError(f"{relative}: cannot be read ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise TerminalHarvestError(f"{relative}: not a regular file")
            data = handle.read(limit + 1)
        except OSError as error:
            raise TerminalHarvestError(f"{relative}: cannot be read ({error.strerror})") from None
    if len(data) > limit:
        raise TerminalHarvestError(
            f"{relative}: larger than {limit:,} bytes ([local] max_file_bytes); not read"
        )
    return data


def document_record(relative: str, data: bytes, *, licence: str = LOCAL_LICENCE) -> Record:
    """The record of one document (pure): ``relative`` is its path in the folder.

    Raises :class:`~pipeline.errors.ParseError` naming the file when it has no text to cite."""
    relative = unicodedata.normalize("NFC", relative)
    fmt = FORMATS.get(PurePosixPath(relative).suffix.lower(), "text")
    title: str | None = None
    if fmt == "pdf":
        try:
            passages = pdf_passages(pdf_pages(data, relative))
        except DocumentError as error:  # LimitExceeded too: one line naming the file
            raise ParseError(error.message) from None
    else:
        text = _utf8(data, relative)
        title, passages = markdown_passages(text) if fmt == "markdown" else (None, [])
        if fmt == "text":
            passages = text_passages(text)
    if not passages:
        raise ParseError(f"{relative}: the document has no text to cite")
    digest = hashlib.sha256(data).hexdigest()
    return Record(
        record_id=f"{NAME}:{encode_local_id(relative)}",
        source=NAME,
        version=digest[:VERSION_DIGITS],
        title=title or relative,
        content_type="document",
        flags=Flags(),
        passages=passages,
        licence=normalise(licence),
        licence_raw=cut(None if licence == LOCAL_LICENCE else licence),
        metadata={
            "file": relative,
            "format": fmt,
            "bytes": len(data),
            "sha256": digest,
            "segmentation": LOCAL_SEGMENTATION,
        },
    )


def pdf_pages(data: bytes, name: str) -> list[str]:
    from audit.references.inputs import pdf_pages as read_pages  # pypdf loads with PDFs only

    return read_pages(data, name)


def _utf8(data: bytes, relative: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        at = undecodable_offset(error, data)
        raise ParseError(
            f"{relative}: not UTF-8 text (byte 0x{data[at]:02x} at offset {at}); save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise ParseError(f"{relative}: holds a NUL byte at offset {data.index(0)}: not text")
    return text


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """``citeseal parse local FILE``: the record one document would give (``url``, when a
    wrapper names one, gives its file name and so its format; else Markdown, or PDF by its
    ``%PDF-`` header)."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    name = PurePosixPath(url).name if url else "document.md"
    if url is None and data.lstrip()[:5] == b"%PDF-":
        name = "document.pdf"
    return ParseResult(source=NAME, records=[document_record(name, data)], count=1)


PLUGIN = Plugin(
    name=NAME,
    schemes=(NAME,),
    base_url="",  # no API: the files of a folder
    parse_body=parse,
    options=LocalSpec,
    rank=60,
    table_searches=searches,
)
