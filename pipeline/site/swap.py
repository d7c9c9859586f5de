"""Putting a new site in place of the old one, atomically, and cleaning up after a killed build.

The new site is written into a staging folder beside ``--out`` (``.<name>.build-XXXXXXXX``,
on the same filesystem), then :func:`replace_folder` puts it in place:

- **Linux**: one ``renameat2(…, RENAME_EXCHANGE)`` call swaps the two folders in a single
  step, so at every moment ``--out`` is a complete site — the previous one, then the new one;
  the previous site, now under the staging name, is deleted.
- **Elsewhere**, or on a filesystem that refuses the exchange (``EINVAL``, ``ENOSYS``,
  ``ENOTSUP``): two renames, ``--out`` → ``.<name>.old-XXXXXXXX`` then staging → ``--out``.
  Between them ``--out`` does not exist; a build killed there leaves the previous site under
  the ``.old-`` name, and the next build puts it back before anything else.

A first build (no ``--out`` yet) is one plain rename. Builds that write beside the same folder
take turns: each holds an advisory lock on the parent folder (``flock``, released by the
system when a process dies, ``kill -9`` included) from its first file to its last deletion,
and refuses to start while another holds it. Each build begins with :func:`recover`: when
``--out`` is missing and a previous site was left under an ``.old-`` name, it is put back;
then every ``.<name>.build-*`` and ``.<name>.old-*`` folder a killed build left is removed.
Where ``flock`` does not exist (Windows) a site build stops with a one-line error rather than
run unserialised (:mod:`audit.locking`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from audit.errors import InputError
from audit.locking import hold, require_locks

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


def staging_prefix(out: Path) -> str:
    return f".{out.name}.build-"


def retired_prefix(out: Path) -> str:
    return f".{out.name}.old-"


def _renameat2() -> Any:  # the C function, or None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function = getattr(libc, "renameat2", None)  # glibc 2.28 and later
    if function is None:
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths in one atomic step; False where the system cannot."""
    function = _renameat2()
    if function is None:
        return False
    done = function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(first), None, str(second))


def _fresh(out: Path, prefix: str) -> Path:
    """An unused name beside ``out`` (created and removed, so the name is ours)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=out.parent))
    path.rmdir()
    return path


def _retire(out: Path) -> Path:
    """First rename of the fallback: ``out`` to an ``.old-`` name."""
    retired = _fresh(out, retired_prefix(out))
    out.rename(retired)
    return retired


def _install(staging: Path, out: Path) -> None:
    """Second rename of the fallback (and the only one of a first build)."""
    staging.rename(out)


def replace_folder(staging: Path, out: Path) -> None:
    """Put ``staging`` in place of ``out`` (see the module docstring); ``staging`` is gone."""
    if not out.exists():
        _install(staging, out)
        return
    if exchange(staging, out):
        shutil.rmtree(staging)  # the previous site, under the staging name now
        return
    retired = _retire(out)
    try:
        _install(staging, out)
    except OSError:
        retired.rename(out)
        raise
    shutil.rmtree(retired)


def _leftovers(out: Path, prefix: str) -> list[Path]:
    """What killed builds left beside ``out`` under ``prefix``; a link of that name is
    removed as it is found (only the link: it is never followed)."""
    if not out.parent.is_dir():
        return []
    found = [p for p in out.parent.iterdir() if p.name.startswith(prefix)]
    for link in (p for p in found if p.is_symlink()):
        link.unlink()
    return sorted(p for p in found if p.is_dir() and not p.is_symlink())


def recover(out: Path) -> None:
    """Undo what a killed build left: the previous site back at ``out``, leftovers removed."""
    retired = _leftovers(out, retired_prefix(out))
    if retired and not out.exists():
        newest = max(retired, key=lambda p: (p.stat().st_ctime_ns, p.name))
        newest.rename(out)
        retired.remove(newest)
    for leftover in retired + _leftovers(out, staging_prefix(out)):
        shutil.rmtree(leftover)


@contextlib.contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Hold the advisory lock of ``folder`` (the parent of ``--out``) for the block."""
    what = f"building a site into {folder}"
    require_locks(what)  # fail closed before opening anything (see audit.locking)
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        with hold(descriptor, what=what, wait=False) as held:
            if not held:
                raise InputError(
                    f"another citeseal site build is writing into {folder}",
                    advice="wait for it to end, then build again",
                )
            yield
    finally:
        os.close(descriptor)  # closing releases the lock
