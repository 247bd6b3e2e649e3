"""Exception hierarchy.

Every exception headrace raises on purpose derives from :class:`HeadraceError` *and* from the
matching builtin, so ``except ValueError`` keeps working for users who do not know our types.
Bad argument values, shapes and undecodable data are also ``RuntimeError``s, because the
reference reports the same problems from its C++ operators as ``RuntimeError``: code written
against either exception type keeps working.
Messages follow ``"<op>: <what was wrong> (got <value>). <how to fix>."``.
"""

from __future__ import annotations


class HeadraceError(Exception):
    """Base of every error headrace raises on purpose."""


class InvalidArgumentError(HeadraceError, ValueError, RuntimeError):
    """A bad argument value or a contradictory combination of arguments."""


class InvalidTypeError(HeadraceError, TypeError):
    """An argument of the wrong Python or tensor type."""


class MissingArgumentError(InvalidArgumentError, TypeError):
    """A required argument was not given (also a ``TypeError``, as Python's own for a missing
    keyword argument, which is what the reference raises)."""


class ShapeError(HeadraceError, ValueError, RuntimeError):
    """A sample's shape or layout does not fit what the operator needs."""


class BatchSizeMismatchError(ShapeError):
    """Inputs or arguments disagree on the batch size."""


class UnsupportedDeviceError(HeadraceError, ValueError):
    """The operator has no kernel for the requested device."""


class BackendUnavailableError(HeadraceError, RuntimeError):
    """A backend (torch, CUDA, a codec) needed for the call is not installed."""


class DecodeError(HeadraceError, ValueError, RuntimeError):
    """A sample could not be decoded.

    Attributes
    ----------
    sample_index : int or None
        Index of the sample in its batch.
    source : str or None
        Where the sample came from (file path, record), when known.
    """

    def __init__(
        self, message: str, *, sample_index: int | None = None, source: str | None = None
    ) -> None:
        super().__init__(message)
        self.sample_index = sample_index
        self.source = source


class ReaderStateError(HeadraceError, RuntimeError):
    """A reader was used in a way its state does not allow."""


class CheckpointFormatError(HeadraceError, ValueError):
    """A checkpoint payload or file is malformed."""


__all__ = [
    "BackendUnavailableError",
    "BatchSizeMismatchError",
    "CheckpointFormatError",
    "DecodeError",
    "HeadraceError",
    "InvalidArgumentError",
    "InvalidTypeError",
    "MissingArgumentError",
    "ReaderStateError",
    "ShapeError",
    "UnsupportedDeviceError",
]
