"""``wds2idx``: write the index file of a webdataset tar shard (the reference's ``v1.2`` format).

The index lists one sample per line after a ``v1.2 <sample count>`` header; each sample is a
sequence of ``<ext> <data offset> <size> <member name>`` groups. ``readers.Webdataset`` (and the
reference's reader) then skip scanning the tar headers.

Usage: ``wds2idx ARCHIVE [INDEX]`` (default index: the archive's name with ``.idx``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from headrace.readers._tar import scan_tar, unsafe_name
from headrace.readers.webdataset import group_members


def create_index(archive: str | os.PathLike[str], index: str | os.PathLike[str]) -> int:
    """Scan ``archive`` and write its index to ``index``; return the number of samples.

    Refuses malformed or truncated archives, unsafe member names and names with whitespace
    (the index format cannot hold them), raising ``ValueError`` naming the archive and offset.

    Examples
    --------
    >>> import io, os, tarfile, tempfile
    >>> d = tempfile.mkdtemp(); tar = os.path.join(d, "s.tar")
    >>> with tarfile.open(tar, "w") as tf:
    ...     for name in ("0.jpg", "0.cls", "1.jpg"):
    ...         ti = tarfile.TarInfo(name); ti.size = 2; tf.addfile(ti, io.BytesIO(b"xy"))
    >>> create_index(tar, os.path.join(d, "s.idx"))
    2
    >>> print(open(os.path.join(d, "s.idx")).read(), end="")
    v1.2 2
    jpg 512 2 0.jpg cls 1536 2 0.cls
    jpg 2560 2 1.jpg
    """
    path = os.fsdecode(archive)
    members, problem = scan_tar(path)
    if problem is not None:
        raise problem
    for m in members:
        if unsafe_name(m.name):
            raise ValueError(
                f"{path}: unsafe member name {m.name!r} (absolute or with '..') at byte offset "
                f"{m.offset}, refused"
            )
        if any(c.isspace() for c in m.name):
            raise ValueError(
                f"{path}: member name {m.name!r} at byte offset {m.offset} contains whitespace, "
                "which the index format cannot hold"
            )
    samples = group_members(path, members)
    if not samples:
        raise ValueError(f"{path}: the archive holds no samples")
    lines = [f"v1.2 {len(samples)}"]
    for s in samples:
        lines.append(" ".join(f"{c.ext} {c.offset} {c.size} {c.name}" for c in s.components))
    with open(os.fsdecode(index), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return len(samples)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``wds2idx`` console script."""
    parser = argparse.ArgumentParser(
        prog="wds2idx",
        description="Write the index file of a webdataset tar shard, for readers.Webdataset.",
    )
    parser.add_argument("archive", help="path to the .tar shard")
    parser.add_argument("index", nargs="?", help="path of the index file (default: ARCHIVE.idx)")
    args = parser.parse_args(argv)
    index = args.index or os.path.splitext(args.archive)[0] + ".idx"
    try:
        n = create_index(args.archive, index)
    except (OSError, ValueError) as e:
        print(f"wds2idx: error: {e}", file=sys.stderr)
        return 1
    print(f"wds2idx: {n} samples -> {index}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["create_index", "main"]
