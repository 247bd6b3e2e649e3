"""``experimental.readers.Fits``: image HDUs of FITS files, read with ``astropy`` (extra ``fits``).

Examples
--------
>>> import numpy as np, pathlib, tempfile
>>> from astropy.io import fits
>>> from headrace.readers.fits import Fits
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> hdus = [fits.PrimaryHDU(), fits.ImageHDU(np.ones((2, 3), np.int16))]
>>> fits.HDUList(hdus).writeto(d / "a.fits")
>>> [(a.shape, str(a.dtype)) for (a,) in Fits(file_root=d).next_epoch()]
[((2, 3), 'i16')]
"""

from __future__ import annotations

import errno
import importlib
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace.readers._base import Reader
from headrace.readers._files import resolve_files
from headrace.readers._outputs import output_device, shuffle_seed, wrap_arrays
from headrace.readers.file import FileReadError, MissingFileError

_OP = "experimental.readers.Fits"


class FitsFormatError(DecodeError):
    """A FITS file cannot be parsed, is truncated, or lacks a requested image HDU."""


def load_astropy() -> Any:
    """``astropy.io.fits``, or an ImportError saying which extra to install."""
    try:
        return importlib.import_module("astropy.io.fits")
    except ImportError as e:
        raise ImportError(
            f"{_OP} needs astropy: pip install headrace[fits]  (or: pip install 'astropy>=6')."
        ) from e


class _FitsDataset:
    """FITS paths; ``read(i)`` returns one array per requested HDU (1-based indices)."""

    read_errors = (OSError, DecodeError)

    def __init__(self, paths: list[str], hdus: list[int], dtypes: list[np.dtype] | None) -> None:
        self.paths = paths
        self.hdus = hdus
        self.dtypes = dtypes
        self.fits = load_astropy()

    def __len__(self) -> int:
        return len(self.paths)

    def source(self, index: int) -> str:
        return self.paths[index]

    def _bad(self, index: int, path: str, what: str) -> FitsFormatError:
        return FitsFormatError(f"{_OP}: sample {index} ({path!r}): {what}", source=path)

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        path = self.paths[index]
        out: list[np.ndarray] = []
        hdu_at = "opening the file"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # astropy warns before it fails; we raise instead
                with self.fits.open(path, memmap=False, lazy_load_hdus=True) as hdul:
                    for j, h in enumerate(self.hdus):
                        hdu_at = f"HDU {h}"
                        try:
                            hdu = hdul[h - 1]
                        except IndexError:
                            raise self._bad(
                                index, path, f"HDU {h} does not exist (the file is short or has "
                                "fewer HDUs; indices start at 1)"
                            ) from None  # fmt: skip
                        if not getattr(hdu, "is_image", False) or not hdu.header.get("NAXIS"):
                            raise self._bad(index, path, f"HDU {h} holds no image data")
                        data = np.asarray(hdu.data)
                        arr = np.empty(data.shape, data.dtype.newbyteorder("="))
                        arr[...] = data
                        if self.dtypes is not None and arr.dtype != self.dtypes[j]:
                            raise InvalidArgumentError(
                                f"{_OP}: sample {index} ({path!r}): HDU {h} stores "
                                f"{arr.dtype}, but dtypes[{j}] is {self.dtypes[j]}."
                            )
                        out.append(arr)
        except (DecodeError, InvalidArgumentError):
            raise
        except FileNotFoundError as e:
            raise MissingFileError(errno.ENOENT, f"{_OP}: sample {index} is missing", path) from e
        except PermissionError as e:
            raise FileReadError(e.errno, f"{_OP}: cannot read sample {index}", path) from e
        except (OSError, ValueError, TypeError, IndexError, KeyError) as e:
            raise self._bad(index, path, f"corrupt or truncated FITS data at {hdu_at} ({e})") from e
        return tuple(out)


def _hdu_indices(v: Any) -> list[int]:
    vals = [int(h) for h in np.atleast_1d(v)] if v is not None else [2]
    if not vals or any(h < 1 for h in vals):
        raise InvalidArgumentError(f"{_OP}: hdu_indices must be indices >= 1 (got {v!r}).")
    return vals


def _dtypes(v: Any, n: int) -> list[np.dtype] | None:
    if v is None:
        return None
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if len(vals) != n:
        raise InvalidArgumentError(
            f"{_OP}: dtypes has {len(vals)} types for {n} outputs (one per hdu_indices entry)."
        )
    return [np.dtype(_dt.dtype(t).numpy) for t in vals]


class Fits(Reader):
    """Read image HDUs from FITS files (uncompressed and tile-compressed), one output per HDU.

    Each output is the HDU's image with its stored shape and element type (after the FITS
    scaling conventions astropy applies, e.g. ``BZERO=32768`` 16-bit data is uint16), C-ordered
    in native byte order. Needs ``astropy`` (``pip install headrace[fits]``).

    Parameters
    ----------
    max_batch_size, name, num_inputs
        As every reader.
    device : {"cpu", "gpu"}
        ``"gpu"`` reads on the host and uploads each batch once.
    file_root, file_filter, file_list, files
        Where the files are (``file_filter`` default ``"*.fits"``; the files of ``file_root``,
        then of each direct sub-folder, sorted).
    hdu_indices : int or list of int
        The HDUs to read, counted from 1 (default ``[2]``: the first extension); one output each.
    dtypes : DType or list of DType, optional
        The expected element type of each output; a file storing another type raises
        :class:`~headrace.InvalidArgumentError` (types are never converted silently).
    dont_use_mmap : bool
        Accepted; files are always read with plain file I/O (only the requested HDUs' bytes),
        since scaled (``BZERO``/``BSCALE``) images cannot be memory mapped.
    shuffle_after_epoch, shuffle_after_epoch_seed
        Shuffle the whole dataset every epoch (seeded; the same on every rank).
    **kwargs
        Common reader arguments (``shard_id``, ``num_shards``, ``random_shuffle``, ``seed``,
        ``pad_last_batch``, ``enable_checkpointing``, ``on_error`` ...).

    Raises
    ------
    ImportError
        astropy is not installed (the message names ``pip install headrace[fits]``).
    FitsFormatError
        (a :class:`~headrace.DecodeError`) a file is corrupt or truncated, or lacks the HDU.

    Examples
    --------
    >>> import numpy as np, pathlib, tempfile
    >>> from astropy.io import fits
    >>> import headrace as ndd
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.fits"
    >>> fits.HDUList([fits.PrimaryHDU(np.zeros(3, np.uint8)),
    ...               fits.ImageHDU(np.ones((2, 2), np.float32))]).writeto(p)
    >>> r = ndd.experimental.readers.Fits(files=[p], hdu_indices=[1, 2])
    >>> [(a.shape, b.shape) for a, b in r.next_epoch()]
    [((3,), (2, 2))]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        file_root: Any = None,
        file_filter: str | None = None,
        file_list: Any = None,
        files: Sequence[Any] | Any = None,
        hdu_indices: Any = None,
        dtypes: Any = None,
        dont_use_mmap: bool | None = None,
        shuffle_after_epoch: bool | None = None,
        shuffle_after_epoch_seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        self._out_device = output_device(_OP, device)
        shuffle_seed(kwargs, shuffle_after_epoch, shuffle_after_epoch_seed)
        super().__init__(max_batch_size, name, "cpu", num_inputs, **kwargs)
        if shuffle_after_epoch and (self._random_shuffle or self._stick_to_shard):
            raise InvalidArgumentError(
                f"{_OP}: shuffle_after_epoch cannot be combined with random_shuffle or "
                "stick_to_shard."
            )
        self._global_shuffle = bool(shuffle_after_epoch)
        hdus = _hdu_indices(hdu_indices)
        types = _dtypes(dtypes, len(hdus))
        paths = resolve_files(_OP, file_root, file_filter or "*.fits", file_list, files)
        self._outputs = tuple((_dt.uint8, None) for _ in hdus)  # typed per batch (see _wrap)
        self._dataset = _FitsDataset(paths, hdus, types)
        self._finish_init()

    def _wrap(
        self, samples: Sequence[tuple[np.ndarray, ...]], sources: Sequence[str | None], batch: bool
    ) -> tuple[Any, ...]:
        return wrap_arrays(_OP, samples, sources, batch, self._out_device)


__all__ = ["Fits", "FitsFormatError", "load_astropy"]
