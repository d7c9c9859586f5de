"""PubMed's baseline and update files (``pubmedNNnNNNN.xml.gz``) read from folders.

NCBI publishes all of PubMed once a year as the *baseline* (about 1,300 gzipped
``PubmedArticleSet`` files) and then daily *update* files in the same format, which carry
revised and new records and ``<DeleteCitation>`` elements. Two commands read such folders,
with the one reader of this module and the PubMed parser (:mod:`pipeline.sources.pubmed_xml`):

* ``snapshot build`` of a spec whose ``[pubmed]`` table names folders instead of queries::

      [pubmed]
      baseline = "pubmed-baseline"   # relative to the spec file
      updates = "pubmed-updates"     # optional: daily update files

* ``citeseal scale ingest --baseline DIR --updates DIR`` on Spark (:mod:`pipeline.scale`).

Rules:

* **Which files.** In each folder every ``*.xml.gz`` (gzip) and ``*.xml`` file, in name
  order, the baseline's before the updates'. NCBI's ``NAME.md5`` beside a file is checked when
  it is there (a mismatch fails that file); hidden entries are passed over; any other entry,
  a name found in both folders, or a folder without a single file is a failure naming it.
  A file larger than :data:`MAX_XML_BYTES` uncompressed is refused (a gzip bomb).
* **What a record is.** As the last file that holds it gives it; a ``DeleteCitation`` deletes
  it as of the end of its file (after the records of that file), and a later file may bring
  it back.
* **snapshot build.** One step per file, newest first, so each record is delivered once, from
  the newest file that holds it, and a deleted one is not delivered (the build keeps the first
  delivery of a record, :mod:`pipeline.snapshot.ingest`); then the complete listing of the
  records delivered (:class:`~pipeline.sources.base.Listing`), so a record of the lineage
  that the files delete is withdrawn. When a file fails there is no listing: nothing is
  withdrawn, and the build fails (exit 3) unless ``--allow-partial``.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import ParseError
from pipeline.sources.base import Listing, Search
from pipeline.sources.pubmed_xml import SOURCE, parse_update_file

if TYPE_CHECKING:
    from pipeline.http import HttpClient
    from pipeline.records import Record, Refusal

MAX_XML_BYTES = 2 * 1024**3  # uncompressed bytes of one file at most (real ones: ~250 MB)
SUFFIXES = (".xml.gz", ".xml")


@dataclass(frozen=True)
class InputFile:
    """One baseline or update file: its name, where it is, and its generation (0 for the
    baseline, 1, 2, … for each update file in name order)."""

    name: str
    path: Path
    generation: int

    @property
    def stem(self) -> str:
        """The name without ``.xml.gz`` / ``.xml`` (``pubmed26n0001``)."""
        for suffix in SUFFIXES:
            if self.name.endswith(suffix):
                return self.name[: -len(suffix)]
        return self.name


@dataclass(frozen=True)
class FileRecords:
    """What one file holds: its records in document order, the records the parser refused,
    and the record ids its ``DeleteCitation`` elements delete."""

    name: str
    records: list[Record]
    refused: list[Refusal]
    deleted: list[str]


def input_files(baseline: Path, updates: Path | None = None) -> list[InputFile]:
    """The files of ``baseline`` (generation 0) then of ``updates`` (module docstring);
    :class:`~pipeline.errors.ParseError` naming the first entry that cannot be read."""
    found = [InputFile(name, baseline / name, 0) for name in _folder_files(baseline)]
    if updates is not None:
        for number, name in enumerate(_folder_files(updates), start=1):
            found.append(InputFile(name, updates / name, number))
    seen: set[str] = set()
    for item in found:
        if item.stem in seen:
            raise ParseError(f"{item.name}: in both the baseline and the updates folder")
        seen.add(item.stem)
    return found


def _folder_files(folder: Path) -> list[str]:
    try:
        entries = sorted(p.name for p in folder.iterdir())
    except OSError as error:
        why = "does not exist" if isinstance(error, FileNotFoundError) else "cannot be read"
        raise ParseError(f"the PubMed files folder {folder} {why}") from None
    names: list[str] = []
    for name in entries:
        if name.startswith("."):
            continue
        if name.endswith(SUFFIXES) and (folder / name).is_file():
            names.append(name)
        elif name.endswith(".md5") and name.removesuffix(".md5").endswith(SUFFIXES):
            continue  # checked with its file (load_file)
        else:
            raise ParseError(
                f"{folder / name}: not a PubMed baseline or update file (expected "
                "pubmedNNnNNNN.xml.gz, .xml, or its .md5)"
            )
    if not names:
        raise ParseError(f"the PubMed files folder {folder} holds no .xml.gz or .xml file")
    return names


def read_file(name: str, data: bytes) -> FileRecords:
    """The records of one file's bytes (gzipped when its name ends ``.gz``): pure, the one
    reader ``snapshot build`` and ``scale ingest`` share."""
    body = _gunzip(name, data) if name.endswith(".gz") else data
    if len(body) > MAX_XML_BYTES:
        raise ParseError(f"{name}: larger than {MAX_XML_BYTES:,} bytes of XML; not read")
    try:
        result, deleted = parse_update_file(body)
    except ParseError as error:
        raise ParseError(f"{name}: {error.message}") from None
    return FileRecords(name, result.records, result.refused, deleted)


def _gunzip(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while block := stream.read(1 << 20):
                out.write(block)
                if out.tell() > MAX_XML_BYTES:
                    raise ParseError(f"{name}: larger than {MAX_XML_BYTES:,} bytes of XML")
    except (OSError, EOFError, zlib.error) as error:
        raise ParseError(f"{name}: not a complete gzip file ({error})") from None
    return out.getvalue()


def load_file(path: Path) -> FileRecords:
    """:func:`read_file` of the file at ``path`` (:func:`file_bytes`)."""
    return read_file(path.name, file_bytes(path))


def file_bytes(path: Path) -> bytes:
    """The bytes of the file at ``path``, checked against its ``.md5`` when it has one."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ParseError(f"{path.name}: cannot be read ({error.strerror})") from None
    md5 = path.with_name(path.name + ".md5")
    if md5.is_file():
        expected = _md5_of(md5)
        actual = hashlib.md5(data, usedforsecurity=False).hexdigest()
        if expected != actual:
            raise ParseError(f"{path.name}: its md5 is {actual}, its .md5 file says {expected}")
    return data


def _md5_of(path: Path) -> str:
    """The digest in an NCBI ``.md5`` file (``MD5(pubmed26n0001.xml.gz)= <hex>``) or in the
    ``md5sum`` format (``<hex>  name``)."""
    text = path.read_text("ascii", errors="replace").strip()
    digest = text.rsplit("= ", 1)[-1] if "= " in text else text.split()[0] if text else ""
    return digest.strip().lower()


# -- snapshot build over the files (module docstring) ---------------------------------------


@dataclass
class _Newest:
    """What the newest-first steps of one harvest have settled: the record ids delivered or
    deleted by a newer file, and whether every file was read."""

    settled: set[str] = field(default_factory=set)
    delivered: set[str] = field(default_factory=set)
    read: int = 0

    def take(self, content: FileRecords) -> list[Record]:
        """The records of ``content`` no newer file settled (the last of a PMID in a file
        wins); its deletions settle the ids they name first (they follow its records)."""
        self.read += 1
        self.settled.update(content.deleted)
        kept: list[Record] = []
        for record in reversed(content.records):
            if record.record_id not in self.settled:
                self.settled.add(record.record_id)
                kept.append(record)
        self.delivered.update(r.record_id for r in kept)
        kept.reverse()
        return kept


def searches(baseline: Path | None, updates: Path | None, shown: str) -> list[Search]:
    """The harvest steps of a ``[pubmed]`` table naming folders (module docstring)."""
    if baseline is None:
        return []  # a spec read back from a snapshot: its folders are not here
    try:
        files = input_files(baseline, updates)
    except ParseError as error:
        return [Search("files", shown, _failing(error))]
    state = _Newest()
    steps = [Search("read", item.name, _reading(item, state)) for item in reversed(files)]
    steps.append(Search("listing", shown, _listing(state, len(files)), lists=True))
    return steps


def _failing(error: ParseError) -> Callable[[HttpClient], Sequence[Record]]:
    def run(_client: HttpClient) -> Sequence[Record]:
        raise error

    return run


def _reading(item: InputFile, state: _Newest) -> Callable[[HttpClient], Sequence[Record]]:
    def run(client: HttpClient) -> Sequence[Record]:
        content = load_file(item.path)
        if content.refused:
            client.report_refused(SOURCE, content.refused)
        return state.take(content)

    return run


def _listing(state: _Newest, files: int) -> Callable[[HttpClient], Any]:
    def run(_client: HttpClient) -> Listing | tuple[()]:
        if state.read < files:
            return ()  # a file failed: no complete listing, so nothing is withdrawn
        return Listing(frozenset(state.delivered))

    return run
