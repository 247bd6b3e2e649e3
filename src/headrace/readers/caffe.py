"""``readers.Caffe`` and ``readers.Caffe2``: samples stored in LMDB databases as protobuf records.

Both read LMDB databases through the ``lmdb`` package and parse records with the ``protobuf``
runtime (extra ``headrace[lmdb]``; the message schemas are declared in
:mod:`headrace.readers._caffe_protos`). Records are read in the databases' key order; several
databases are read one after the other. Sharding, shuffling, epochs, prefetching, checkpoints
and ``on_error`` come from :class:`~headrace.readers.Reader`.

A record that cannot be read or parsed, or that lacks what the reader's arguments say it holds,
raises :class:`~headrace.readers.file.FileReadError` naming the reader, the database, the record
index and its key; with ``on_error="skip"`` the whole sample is dropped (every output stays
aligned), counted in ``get_metadata()["skipped"]`` and reported with a warning.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.dtype import float32, int32, int64, uint8
from headrace._core.errors import InvalidArgumentError, MissingArgumentError
from headrace.readers import _caffe_protos as P
from headrace.readers._base import Reader
from headrace.readers._lmdb import LMDBRecords, as_paths
from headrace.readers.file import FileReadError

#: Caffe2 label types (``label_type``), as the reference numbers them.
SINGLE_LABEL, MULTI_LABEL_SPARSE, MULTI_LABEL_DENSE, MULTI_LABEL_WEIGHTED_SPARSE, NO_LABEL = range(
    5
)
_LABEL_TYPES = {
    SINGLE_LABEL: "SINGLE_LABEL",
    MULTI_LABEL_SPARSE: "MULTI_LABEL_SPARSE",
    MULTI_LABEL_DENSE: "MULTI_LABEL_DENSE",
    MULTI_LABEL_WEIGHTED_SPARSE: "MULTI_LABEL_WEIGHTED_SPARSE",
    NO_LABEL: "NO_LABEL",
}
_DTYPES = {np.dtype(np.uint8): uint8, np.dtype(np.int32): int32, np.dtype(np.float32): float32,
           np.dtype(np.int64): int64}  # fmt: skip


class _RecordError(Exception):
    """A record lacks what the reader expects (turned into a ``FileReadError`` naming it)."""


class _LMDBDataset:
    """Records of LMDB databases parsed by ``parse(bytes) -> tuple of arrays``; the first
    parsed record fixes the output dtypes and every later record must match them."""

    read_errors = (FileReadError,)

    def __init__(self, db: LMDBRecords, parse: Any, skip: bool) -> None:
        self.db = db
        self.parse = parse
        self.skip = skip
        self.dtypes: tuple[np.dtype, ...] | None = None
        from google.protobuf.message import DecodeError

        self._corrupt = (DecodeError, ValueError)

    def __len__(self) -> int:
        return len(self.db)

    def source(self, index: int) -> str:
        return self.db.source(index)

    def _parse(self, value: Any) -> tuple[np.ndarray, ...]:
        return self.parse(bytes(value))

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        try:
            try:
                arrays = self.db.get(index, self._parse)
            except _RecordError as e:
                raise self.db.error(index, str(e)) from None
            except self._corrupt as e:
                raise self.db.error(index, f"cannot parse the record ({e})") from None
            if self.dtypes is not None:
                got = tuple(a.dtype for a in arrays)
                if got != self.dtypes:
                    raise self.db.error(
                        index,
                        f"its outputs have types {[str(d) for d in got]}, the first record's "
                        f"have {[str(d) for d in self.dtypes]}; every record must store the "
                        "same kinds of values",
                    )
        except FileReadError as e:
            if self.skip:
                warnings.warn(f"skipping a sample: {e}", RuntimeWarning, stacklevel=2)
            raise
        return arrays

    def fix_dtypes(self) -> tuple[np.dtype, ...]:
        """Parse the first readable record (with ``skip``; else record 0) for the output types."""
        last: FileReadError | None = None
        for i in range(len(self) if self.skip else 1):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    arrays = self.read(i)
            except FileReadError as e:
                last = e
                continue
            self.dtypes = tuple(a.dtype for a in arrays)
            return self.dtypes
        assert last is not None
        raise last


def _image_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, np.uint8).copy()


def _raw_image(data: bytes, shape: tuple[int, ...], where: str) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64)) if all(s >= 0 for s in shape) else -1
    if n != len(data):
        raise _RecordError(
            f"the raw image of shape {list(shape)} needs {max(n, 0)} bytes, {where} holds "
            f"{len(data)}"
        )
    return np.frombuffer(data, np.uint8).reshape(shape).copy()


def _open(reader: Reader, op: str, path: Any, parse: Any, read_ahead: Any) -> _LMDBDataset:
    """The dataset of ``path``'s records parsed by ``parse``, honouring the reader's skip mode."""
    if path is None:
        raise MissingArgumentError(f"{op}: path (the LMDB database) is required.")
    db = LMDBRecords(as_paths(op, path), op, bool(read_ahead))
    return _LMDBDataset(db, parse, reader._skip)


class Caffe(Reader):
    """Read ``(image, label)`` pairs from a Caffe LMDB of ``Datum`` records.

    Outputs, in this order: the image when ``image_available`` — encoded bytes (uint8, 1-D)
    unless the record says ``encoded: false``, then the raw pixels as uint8 ``(height, width,
    channels)`` taken in the order stored (the reference's reading; note that Caffe's own tools
    store raw pixels channel-major) — and the label (int32, shape ``(1,)``) when
    ``label_available``. Output layouts are unset, as the reference's.

    Parameters
    ----------
    max_batch_size, name, device, num_inputs
        As every reader (``max_batch_size`` is the default ``next_epoch`` batch size).
    path : str, os.PathLike or list of them
        LMDB database folder(s), read one after the other in key order.
    image_available : bool
        The records hold an image (default True).
    label_available : bool
        The records hold a label (default True).
    read_ahead : bool
        Ask the OS to read the database ahead (LMDB's ``readahead``).
    dont_use_mmap, lazy_init, skip_cached_images, tensor_init_bytes
        Accepted; no effect (LMDB is always memory-mapped; the keys are listed at construction).
    **kwargs
        Common reader arguments: ``shard_id``, ``num_shards``, ``stick_to_shard``,
        ``pad_last_batch``, ``random_shuffle``, ``seed``, ``prefetch_queue_depth``,
        ``enable_checkpointing``, keyword-only ``last_batch`` and ``on_error`` ...

    Raises
    ------
    BackendUnavailableError
        ``lmdb`` or ``protobuf`` is not installed (``pip install headrace[lmdb]``).
    FileReadError
        The database is missing, not an LMDB database, truncated or empty; or (when read) a
        record is corrupt or lacks the image or label.

    Examples
    --------
    >>> import pytest, tempfile
    >>> lmdb = pytest.importorskip("lmdb"); _ = pytest.importorskip("google.protobuf")
    >>> from headrace.readers import Caffe
    >>> from headrace.readers._caffe_protos import messages
    >>> d = tempfile.mkdtemp()
    >>> rec = messages().Datum(height=1, width=2, channels=1, data=b"ab", label=7, encoded=False)
    >>> with lmdb.open(d, map_size=1 << 20) as env, env.begin(write=True) as txn:
    ...     _ = txn.put(b"0", rec.SerializeToString())
    >>> [(img.shape, int(lab.item())) for img, lab in Caffe(path=d).next_epoch()]
    [((1, 2, 1), 7)]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
        image_available: bool = True,
        label_available: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        op = "readers.Caffe"
        self._image = bool(image_available)
        self._label = bool(label_available)
        if not (self._image or self._label):
            raise InvalidArgumentError(
                f"{op}: image_available and label_available are both False: nothing to read."
            )
        self._datum = P.messages().Datum
        self._dataset = _open(self, op, path, self._parse, kwargs.get("read_ahead"))
        self._finish_init()
        self._outputs = ((uint8, None),) * self._image + ((int32, None),) * self._label

    def _parse(self, data: bytes) -> tuple[np.ndarray, ...]:
        datum = self._datum.FromString(data)
        out: list[np.ndarray] = []
        if self._image:
            if not datum.HasField("data"):
                raise _RecordError(
                    "the Datum has no image data (float_data-only datums are not supported; "
                    "pass image_available=False to read labels only)"
                )
            if datum.HasField("encoded") and not datum.encoded:
                shape = (datum.height, datum.width, datum.channels)
                out.append(_raw_image(datum.data, shape, "`data`"))
            else:
                out.append(_image_bytes(datum.data))
        if self._label:  # (a Datum without one: an empty label, as the reference)
            label = [datum.label] if datum.HasField("label") else []
            out.append(np.array(label, np.int32))
        return tuple(out)


class Caffe2(Reader):
    """Read samples from a Caffe2 LMDB of ``TensorProtos`` records.

    Each record is a list of tensors; the reader takes, in order: the image (when
    ``image_available``), the label tensor(s) of ``label_type``, ``additional_inputs`` more
    tensors, and a bounding box (when ``bbox``); later tensors are ignored. Outputs follow the
    same order:

    * image: ``STRING`` tensors give encoded bytes (uint8, 1-D); ``BYTE`` tensors give raw pixels,
      uint8 ``(H, W, C)`` from their ``dims`` (``(H, W)`` gives one channel);
    * label, by ``label_type`` (the label tensor holds ``INT32`` or ``FLOAT`` values, which give
      an int32 or float32 label):

      - ``0`` SINGLE_LABEL: the one value, shape ``(1,)``;
      - ``1`` MULTI_LABEL_SPARSE: the active class indices, given as a multi-hot vector of
        ``num_labels`` (1 at each index);
      - ``2`` MULTI_LABEL_DENSE: the stored vector as it is;
      - ``3`` MULTI_LABEL_WEIGHTED_SPARSE: two tensors, indices then ``FLOAT`` weights, given as
        a float32 vector of ``num_labels`` holding each weight at its index;
      - ``4`` NO_LABEL: no label output;
    * each additional input: its ``FLOAT``/``INT32``/``INT64`` values, 1-D;
    * bbox: an ``INT32`` tensor of 4 values, int32 ``(4,)``.

    The first record fixes the output types; a later record storing other kinds of values is an
    error. Output layouts are unset, as the reference's.

    Parameters
    ----------
    path : str, os.PathLike or list of them
        LMDB database folder(s), read one after the other in key order.
    image_available : bool
        The records start with an image (default True).
    label_type : int
        0-4 as above (default 0).
    num_labels : int
        Number of classes, the length of sparse labels (default 1).
    additional_inputs : int
        Extra tensors after the label, each its own output (default 0).
    bbox : bool
        A bounding box tensor follows (default False).
    read_ahead : bool
        Ask the OS to read the database ahead (LMDB's ``readahead``).
    dont_use_mmap, lazy_init, skip_cached_images, tensor_init_bytes
        Accepted; no effect (LMDB is always memory-mapped; the keys are listed at construction).
    max_batch_size, name, device, num_inputs, **kwargs
        As :class:`Caffe`.

    Notes
    -----
    The reference (DALI 2.4) fails on ``label_type`` 1 and 3; this reader implements what its
    documentation describes.

    Examples
    --------
    >>> import pytest, tempfile
    >>> lmdb = pytest.importorskip("lmdb"); _ = pytest.importorskip("google.protobuf")
    >>> from headrace.readers import Caffe2
    >>> from headrace.readers._caffe_protos import messages, STRING, INT32
    >>> m, d = messages(), tempfile.mkdtemp()
    >>> rec = m.TensorProtos(protos=[m.TensorProto(data_type=STRING, string_data=[b"jpeg"]),
    ...                              m.TensorProto(data_type=INT32, int32_data=[0, 2])])
    >>> with lmdb.open(d, map_size=1 << 20) as env, env.begin(write=True) as txn:
    ...     _ = txn.put(b"0", rec.SerializeToString())
    >>> ((img, lab),) = Caffe2(path=d, label_type=1, num_labels=4).next_epoch()
    >>> img.shape, lab.torch().tolist()
    ((4,), [1, 0, 1, 0])
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
        image_available: bool = True,
        label_type: int = SINGLE_LABEL,
        num_labels: int = 1,
        additional_inputs: int = 0,
        bbox: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        op = "readers.Caffe2"
        if isinstance(label_type, bool) or label_type not in _LABEL_TYPES:
            raise InvalidArgumentError(
                f"{op}: label_type must be one of 0-4 "
                f"({', '.join(f'{k}={v}' for k, v in _LABEL_TYPES.items())}); got {label_type!r}."
            )
        for arg, value, low in (("num_labels", num_labels, 1), ("additional_inputs",
                                additional_inputs, 0)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise InvalidArgumentError(
                    f"{op}: {arg} must be an integer >= {low} (got {value!r})."
                )
        self._image = bool(image_available)
        self._label_type = int(label_type)
        self._num_labels = int(num_labels)
        self._additional = int(additional_inputs)
        self._bbox = bool(bbox)
        self._n_label_protos = {NO_LABEL: 0, MULTI_LABEL_WEIGHTED_SPARSE: 2}.get(
            self._label_type, 1
        )
        self._n_protos = self._image + self._n_label_protos + self._additional + self._bbox
        if self._n_protos == 0:
            raise InvalidArgumentError(
                f"{op}: no outputs (image_available=False, label_type=4, additional_inputs=0, "
                "bbox=False): nothing to read."
            )
        m = P.messages()
        self._protos = m.TensorProtos
        self._dataset = _open(self, op, path, self._parse, kwargs.get("read_ahead"))
        self._finish_init()
        dtypes = self._dataset.fix_dtypes()
        self._outputs = tuple((_DTYPES[d], None) for d in dtypes)

    # --- record parsing -------------------------------------------------------------------
    def _parse(self, data: bytes) -> tuple[np.ndarray, ...]:
        protos = self._protos.FromString(data).protos
        if len(protos) < self._n_protos:
            raise _RecordError(
                f"the record holds {len(protos)} tensors, the reader's arguments need "
                f"{self._n_protos} (image_available={self._image}, label_type="
                f"{self._label_type}, additional_inputs={self._additional}, bbox={self._bbox})"
            )
        out: list[np.ndarray] = []
        k = 0
        if self._image:
            out.append(self._image_of(protos[0]))
            k = 1
        if self._label_type != NO_LABEL:
            out.append(self._label_of(protos[k : k + self._n_label_protos]))
            k += self._n_label_protos
        for j in range(self._additional):
            out.append(
                self._values(protos[k], f"additional input {j}", (P.FLOAT, P.INT32, P.INT64))
            )
            k += 1
        if self._bbox:
            box = self._values(protos[k], "the bounding box", (P.INT32,))
            if box.shape != (4,):
                raise _RecordError(f"the bounding box has {box.size} values, expected 4")
            out.append(box)
        return tuple(out)

    @staticmethod
    def _image_of(t: Any) -> np.ndarray:
        if t.data_type == P.STRING:
            if len(t.string_data) < 1:
                raise _RecordError("the encoded image tensor has no string_data")
            return _image_bytes(t.string_data[0])
        if t.data_type == P.BYTE:
            dims = tuple(int(d) for d in t.dims)
            if len(dims) == 2:
                dims = (*dims, 1)
            if len(dims) != 3:
                raise _RecordError(f"the raw image has dims {list(dims)}, expected (H, W[, C])")
            return _raw_image(t.byte_data, dims, "byte_data")
        raise _RecordError(
            f"the image tensor has data_type {t.data_type}; expected STRING ({P.STRING}, "
            f"encoded) or BYTE ({P.BYTE}, raw pixels)"
        )

    @staticmethod
    def _values(t: Any, what: str, allowed: tuple[int, ...]) -> np.ndarray:
        fields = {P.FLOAT: ("float_data", np.float32), P.INT32: ("int32_data", np.int32),
                  P.INT64: ("int64_data", np.int64)}  # fmt: skip
        if t.data_type not in allowed:
            names = ", ".join(f"{n} ({v})" for n, v in (("FLOAT", P.FLOAT), ("INT32", P.INT32),
                              ("INT64", P.INT64)) if v in allowed)  # fmt: skip
            raise _RecordError(f"{what} has data_type {t.data_type}; expected {names}")
        field, dt = fields[t.data_type]
        return np.array(getattr(t, field), dt)

    def _label_of(self, ts: Sequence[Any]) -> np.ndarray:
        lt, n = self._label_type, self._num_labels
        values = self._values(ts[0], "the label", (P.FLOAT, P.INT32))
        if lt == SINGLE_LABEL:
            if values.size != 1:
                raise _RecordError(f"a SINGLE_LABEL label holds {values.size} values, expected 1")
            return values
        if lt == MULTI_LABEL_DENSE:
            return values
        idx = values.astype(np.int64)
        if np.any(idx != values) or np.any((idx < 0) | (idx >= n)):
            raise _RecordError(
                f"the sparse label indices {values.tolist()} are not class indices in "
                f"[0, num_labels={n})"
            )
        if lt == MULTI_LABEL_SPARSE:
            hot = np.zeros(n, values.dtype)
            hot[idx] = 1
            return hot
        weights = self._values(ts[1], "the label weights", (P.FLOAT,))
        if weights.size != idx.size:
            raise _RecordError(
                f"the weighted sparse label has {idx.size} indices but {weights.size} weights"
            )
        out = np.zeros(n, np.float32)
        out[idx] = weights
        return out


__all__ = [
    "MULTI_LABEL_DENSE",
    "MULTI_LABEL_SPARSE",
    "MULTI_LABEL_WEIGHTED_SPARSE",
    "NO_LABEL",
    "SINGLE_LABEL",
    "Caffe",
    "Caffe2",
]
