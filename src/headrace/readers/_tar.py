"""Listing the regular members of an uncompressed tar archive, with checks.

:func:`scan_tar` walks the headers with :mod:`tarfile` (ustar, GNU and PAX headers) and returns
``(name, data offset, size)`` for each regular file, refusing what :mod:`tarfile` would let pass
silently: a member whose data runs past the end of the file (a truncated archive), a garbage
header in the middle of the archive (``tarfile`` treats it as the end), sparse members (their
stored bytes are not the file's content) and names that would escape a folder (absolute, or
with a ``..`` component). Nothing is ever extracted.
"""

from __future__ import annotations

import os
import posixpath
import re
import tarfile
from typing import NamedTuple

BLOCK = 512
_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


class TarFormatError(ValueError):
    """A tar archive is malformed at ``offset`` (``path`` names the archive)."""

    def __init__(self, path: str, offset: int, what: str, member: str | None = None) -> None:
        super().__init__(f"{path}: {what} (at byte offset {offset})")
        self.path, self.offset, self.what, self.member = path, offset, what, member


class TarMember(NamedTuple):
    """A regular file of an archive: its name, where its data starts, and its size."""

    name: str
    offset: int
    size: int


def unsafe_name(name: str) -> bool:
    """True if a member name is absolute or walks up with ``..`` (it would escape a folder).

    Examples
    --------
    >>> [unsafe_name(n) for n in ("a/b.jpg", "./a.jpg", "/etc/passwd", "a/../../b", "C:/x", "a:b")]
    [False, False, True, True, True, False]
    """
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return True
    return ".." in name.replace("\\", "/").split("/")


def scan_tar(path: str) -> tuple[list[TarMember], TarFormatError | None]:
    """The regular members of the archive at ``path``, in archive order.

    Returns the members read before the first problem and the problem (``None`` when the whole
    archive is well formed), so that a caller may keep what precedes a corrupt region. Names are
    *not* checked here (see :func:`unsafe_name`).

    Examples
    --------
    >>> import io, tarfile, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.tar")
    >>> with tarfile.open(p, "w") as tf:
    ...     ti = tarfile.TarInfo("x.txt"); ti.size = 3; tf.addfile(ti, io.BytesIO(b"abc"))
    >>> scan_tar(p)
    ([TarMember(name='x.txt', offset=512, size=3)], None)
    """
    file_size = os.path.getsize(path)
    members: list[TarMember] = []
    with open(path, "rb") as f:
        if file_size == 0:
            return members, TarFormatError(path, 0, "empty file, not a tar archive")
        try:
            tf = tarfile.open(fileobj=f, mode="r:")  # uncompressed only, as the reference
        except tarfile.TarError as e:
            return members, TarFormatError(path, 0, f"not a tar archive ({e})")
        while True:
            pos = tf.offset
            try:
                m = tf.next()
            except (tarfile.TarError, UnicodeError, ValueError, OverflowError) as e:
                return members, TarFormatError(path, pos, f"malformed tar header ({e})")
            if m is None:
                break
            tf.members.clear()  # headers are not kept: memory stays flat for big shards
            if m.issparse():
                return members, TarFormatError(path, m.offset, f"sparse member {m.name!r}", m.name)
            if not m.isreg():
                continue
            if m.offset_data + m.size > file_size:
                return members, TarFormatError(
                    path,
                    m.offset,
                    f"truncated archive: member {m.name!r} needs {m.size} bytes at offset "
                    f"{m.offset_data}, the file has {file_size} bytes",
                    m.name,
                )
            members.append(TarMember(m.name, m.offset_data, m.size))
        end = tf.offset  # where tarfile stopped: must be the end-of-archive marker or EOF
        f.seek(end)
        tail = f.read(BLOCK)
        if tail.strip(b"\0"):
            what = "truncated tar header" if len(tail) < BLOCK else "malformed tar header"
            return members, TarFormatError(path, end, what)
    return members, None


def split_name(name: str) -> tuple[str, str]:
    """``(sample key, extension)``: the extension starts after the first dot of the file name.

    A name without a dot is its own key and extension (the reference's rule).

    Examples
    --------
    >>> split_name("a/b.c/x.seg.png"), split_name("x")
    (('a/b.c/x', 'seg.png'), ('x', 'x'))
    """
    dot = name.find(".", name.rfind("/") + 1)
    if dot < 0:
        return name, name
    return name[:dot], name[dot + 1 :]


def is_hidden(name: str) -> bool:
    """True for members whose file name starts with a dot (never part of a sample).

    Examples
    --------
    >>> is_hidden("d/.DS_Store"), is_hidden("./a.jpg")
    (True, False)
    """
    return posixpath.basename(name).startswith(".")


__all__ = ["TarFormatError", "TarMember", "is_hidden", "scan_tar", "split_name", "unsafe_name"]
