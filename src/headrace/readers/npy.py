"""``readers.Numpy``: arrays from ``.npy`` files, whole or a region of interest.

Examples
--------
>>> import numpy as np, pathlib, tempfile
>>> from headrace.readers import Numpy
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> np.save(d / "a.npy", np.arange(12, dtype=np.int16).reshape(3, 4))
>>> [(a.shape, str(a.dtype)) for (a,) in Numpy(file_root=d).next_epoch()]
[((3, 4), 'i16')]
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace.codecs import npy
from headrace.readers._base import Reader
from headrace.readers._files import resolve_files
from headrace.readers._outputs import output_device, shuffle_seed, wrap_arrays
from headrace.readers._preshuffle import preshuffled
from headrace.readers.file import FileReadError, MissingFileError
from headrace.readers.npy_fast import FastRead

_OP = "readers.Numpy"
_FAST_MISSES = 4  # files of other headers in a row after which the fast path is given up


class _NpyDataset:
    """``.npy`` paths; ``read(i)`` returns ``(array,)``, the whole array or its ROI."""

    read_errors = (OSError, DecodeError)

    def __init__(
        self, paths: list[str], roi: npy.Roi | None, use_mmap: bool, cache_headers: bool
    ) -> None:
        self.paths = paths
        self.roi = roi
        self.use_mmap = use_mmap
        self.headers: dict[int, npy.NpyHeader] | None = {} if cache_headers else None
        self.fast: FastRead | None = None  # reads files with the last header seen (npy_fast)
        self.fast_for: npy.NpyHeader | None = None  # the header self.fast was made for
        self.fast_misses = 0  # files in a row it did not fit (at _FAST_MISSES it is not tried)

    def __len__(self) -> int:
        return len(self.paths)

    def source(self, index: int) -> str:
        return self.paths[index]

    def read(self, index: int) -> tuple[np.ndarray]:
        path = self.paths[index]
        fast = self.fast if self.fast_misses < _FAST_MISSES else None
        if fast is not None:
            try:
                arr = fast.read(path)
            except OSError:
                arr = None  # the general path raises it, naming the sample
            if arr is not None:
                self.fast_misses = 0
                return (arr,)
            self.fast_misses += 1
        cached = self.headers.get(index) if self.headers is not None else None
        try:
            arr, hdr = npy.read_file(path, self.roi, use_mmap=self.use_mmap, header=cached)
            if self.fast_misses < _FAST_MISSES and hdr != self.fast_for:
                self.fast_for = hdr  # the next files probably share this header
                with open(path, "rb") as f:
                    self.fast = FastRead.make(f.read(hdr.offset), hdr, self.roi, self.use_mmap)
        except npy.NpyFormatError as e:
            raise npy.NpyFormatError(f"{_OP}: sample {index}: {e}", source=path) from None
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"{_OP}: sample {index}: {e}") from None
        except OSError as e:
            code = e.errno or errno.EIO
            cls = MissingFileError if code == errno.ENOENT else FileReadError
            msg = f"{_OP}: cannot read sample {index} ({e.strerror or e})"
            raise cls(code, msg, path) from e
        if self.headers is not None:
            self.headers[index] = hdr
        return (arr,)


class Numpy(Reader):
    """Read arrays from ``.npy`` files (NumPy format 1.0; 2.0 and 3.0 headers are read too).

    Each sample is one file's array, C-ordered and in native byte order, with the file's shape
    and element type (bool, int8-64, uint8-64, float16/32/64): a Fortran-ordered file gives the
    same logical array as ``np.load``. Exactly one source: ``file_root`` (the files matching
    ``file_filter`` in the folder, then in each direct sub-folder, sorted), ``file_list`` (a text
    file of paths, one a line, relative to ``file_root`` or to the list's folder) or ``files``.

    A region of interest reads only what it covers (the file is memory mapped): a start
    (``roi_start`` or ``rel_roi_start``) and an end or a shape (``roi_end``, ``rel_roi_end``,
    ``roi_shape``, ``rel_roi_shape``), for the axes ``roi_axes`` (default: all). Relative values
    are fractions of each extent; start and end are rounded half away from zero.

    Parameters
    ----------
    max_batch_size, name, num_inputs
        As every reader (``max_batch_size`` is the default ``next_epoch`` batch size).
    device : {"cpu", "gpu"}
        ``"gpu"`` reads on the host and uploads each batch once.
    file_root, file_filter, file_list, files
        Where the files are (``file_filter`` default ``"*.npy"``, a case-sensitive glob).
    roi_start, roi_end, roi_shape : int or list of int, optional
        Absolute ROI (one value applies to every ROI axis).
    rel_roi_start, rel_roi_end, rel_roi_shape : float or list of float, optional
        Relative ROI.
    roi_axes : int or list of int, optional
        The axes the ROI values give, in their order (negative values count from the end).
    out_of_bounds_policy : {"error", "trim_to_shape", "pad"}
        A ROI reaching outside the array raises, is cut to the array, or is padded with
        ``fill_value`` (rounded and saturated for integer arrays).
    fill_value : float
        Padding value (default 0).
    cache_header_information : bool
        Parse each file's header once (re-parsed when the file's size changes).
    dont_use_mmap : bool
        Read ROIs with plain reads of the byte span holding them instead of mapping the file.
    use_o_direct : bool
        Accepted like the reference (needs ``dont_use_mmap=True``); reads are plain reads, the
        page cache is not bypassed.
    register_buffers : bool
        Accepted for compatibility (GPU I/O buffer registration; no effect).
    shuffle_after_epoch : bool
        Shuffle the whole dataset (before sharding) every epoch, the same on every rank.
    shuffle_after_epoch_seed : int, optional
        Seed of that shuffle (default: a fixed one).
    **kwargs
        Common reader arguments: ``shard_id``, ``num_shards``, ``stick_to_shard``,
        ``pad_last_batch``, ``random_shuffle``, ``seed``, ``prefetch_queue_depth``,
        ``enable_checkpointing``, keyword-only ``last_batch`` and ``on_error`` ("skip" drops
        unreadable or corrupt files, counts them in ``get_metadata()["skipped"]``).

    Raises
    ------
    NpyFormatError
        (a :class:`~headrace.DecodeError`) a file is not a readable ``.npy`` array or is shorter
        than its header declares; the message names the reader, the sample and the file.

    Examples
    --------
    >>> import numpy as np, pathlib, tempfile
    >>> from headrace.readers import Numpy
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> np.save(d / "v.npy", np.arange(24, dtype=np.float32).reshape(4, 6))
    >>> ((roi,),) = Numpy(files=[d / "v.npy"], roi_start=[1, 2], roi_shape=[2, 3]).next_epoch()
    >>> np.asarray(roi).tolist()
    [[8.0, 9.0, 10.0], [14.0, 15.0, 16.0]]
    """

    _outputs = ((_dt.uint8, None),)  # the element type is each file's own (see _wrap)

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
        roi_start: Any = None,
        roi_end: Any = None,
        roi_shape: Any = None,
        rel_roi_start: Any = None,
        rel_roi_end: Any = None,
        rel_roi_shape: Any = None,
        roi_axes: Any = None,
        out_of_bounds_policy: str | None = None,
        fill_value: float | None = None,
        cache_header_information: bool | None = None,
        dont_use_mmap: bool | None = None,
        use_o_direct: bool | None = None,
        register_buffers: bool | None = None,
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
        if use_o_direct and not dont_use_mmap:
            raise InvalidArgumentError(
                f"{_OP}: use_o_direct=True needs dont_use_mmap=True (as in the reference)."
            )
        roi = npy.Roi.from_args(
            _OP,
            roi_start=roi_start,
            roi_end=roi_end,
            roi_shape=roi_shape,
            rel_roi_start=rel_roi_start,
            rel_roi_end=rel_roi_end,
            rel_roi_shape=rel_roi_shape,
            roi_axes=roi_axes,
            out_of_bounds_policy=out_of_bounds_policy,
            fill_value=fill_value,
        )
        paths = resolve_files(_OP, file_root, file_filter or "*.npy", file_list, files)
        paths = preshuffled(paths, self._random_shuffle)  # (before sharding, as the reference)
        self._dataset = _NpyDataset(
            paths, roi, not dont_use_mmap and not use_o_direct, bool(cache_header_information)
        )
        self._finish_init()

    def _wrap(
        self, samples: Sequence[tuple[np.ndarray, ...]], sources: Sequence[str | None], batch: bool
    ) -> tuple[Any, ...]:
        return wrap_arrays(_OP, samples, sources, batch, self._out_device)


__all__ = ["Numpy"]
