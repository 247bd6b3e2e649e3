"""``ndd.io.file.read``: read whole files named by UTF-8 path bytes."""

from headrace.decoders.image import file_read as read

__all__ = ["read"]
