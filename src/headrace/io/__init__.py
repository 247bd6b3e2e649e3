"""``ndd.io``: file input (``ndd.io.file.read``)."""

from headrace.io import file

__all__ = ["file"]
