"""``Batch``: many samples with one dtype, layout and device; shapes may differ.

``Batch`` has no ``__getitem__`` and no ``__len__``: ``batch.tensors[i]`` picks samples and
``batch.slice[...]`` indexes inside every sample.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> b = ndd.batch([np.zeros((2, 3), np.uint8), np.ones((4, 1), np.uint8)], layout="HW")
>>> b.batch_size, b.shape
(2, [(2, 3), (4, 1)])
>>> b.tensors[1].shape
(4, 1)
>>> b.slice[0].shape
[(3,), (1,)]
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from headrace import types as _types
from headrace._core import dtype as _dt
from headrace._core import handoff as _ho
from headrace._core import meta as _meta
from headrace._core import storage as _st
from headrace._core.device import CPU, Device
from headrace._core.device import device as _to_device
from headrace._core.entry import op as _op
from headrace._core.errors import BatchSizeMismatchError, InvalidArgumentError, InvalidTypeError
from headrace._core.invocation import InvocationResult
from headrace._core.layout import validate as validate_layout
from headrace._core.operators import ArithmeticMixin, DeviceMixin
from headrace._core.proxy import unwrap as unwrap_proxy
from headrace._core.saturate import saturate
from headrace._core.storage_view import BatchStorage
from headrace._core.tensor import Tensor, _device_of, _maybe_sync

if TYPE_CHECKING:
    from headrace._core.invocation import Invocation


class RaggedBatchError(InvalidArgumentError):
    """A batch with samples of different shapes was asked for as one dense tensor."""


class Batch(ArithmeticMixin, DeviceMixin):
    """A list of samples sharing dtype, layout and device.

    Use :func:`batch` (copies) or :func:`as_batch` (wraps) to create one.
    """

    __slots__ = (
        "__weakref__",
        "_bs",
        "_dense",
        "_device",
        "_dtype",
        "_external",
        "_kept",
        "_layout",
        "_ready",
        "_samples",
        "_sources",
        "_src",
        "_step",
    )
    _is_batch = True  # lets tensor.py recognise batches without importing this module

    def _as_one_tensor(self, *, pad: bool = False, device: Any = None) -> Tensor:
        """``ndd.as_tensor(batch)`` (called by tensor.py, which cannot import this module)."""
        return batch_to_tensor(self, pad=pad, device=device)

    def __init__(
        self,
        tensors: Any = None,
        dtype: Any = None,
        device: Any = None,
        layout: str | None = None,
        invocation_result: Any = None,
        copy: bool = False,
    ) -> None:
        self._src: tuple[Invocation, int, _meta.Meta | None] | None = None
        self._dense: Any = None
        self._external = False
        self._sources: Sequence[str | None] | None = None
        self._kept: tuple[int, ...] | None = None
        self._step: Step | None = None
        self._ready: _ho.Ready | None = None  # CUDA data: when its producer stream wrote it
        if invocation_result is not None:
            inv, out_idx, bs, meta, dev = invocation_result
            self._src = (inv, out_idx, meta)
            self._samples = None
            self._bs = bs
            self._dtype = meta.dtype if meta is not None else None
            self._layout = meta.layout if meta is not None else None
            self._device = dev
            return
        want_dtype = _dt.dtype(dtype) if dtype is not None else None
        want_device = _to_device(device)
        tensors = unwrap_proxy(tensors)
        _wait_for_sources(tensors)
        samples, src_dtype, src_layout, dense, copied, external = _import_samples(
            tensors, want_dtype
        )
        dev = _device_of(samples[0]) if samples else (want_device or CPU)
        if want_device is not None and want_device != dev:
            if dense is not None:
                dense = _st.move(dense, want_device, src_dtype)
                samples = split_dense(dense)
            else:
                samples = [_st.move(s, want_device, src_dtype) for s in samples]
            dev, copied = want_device, True
        if want_dtype is not None and want_dtype != src_dtype:
            if dense is not None:
                dense = _st.cast(dense, want_dtype, src_dtype)
                samples = split_dense(dense)
            else:
                samples = [_st.cast(s, want_dtype, src_dtype) for s in samples]
            src_dtype, copied = want_dtype, True
        if copy and not copied:
            if dense is not None:
                dense = _st.copy_array(dense)
                samples = split_dense(dense)
            else:
                samples = [_st.copy_array(s) for s in samples]
            copied = True
        if src_dtype is None:
            raise InvalidArgumentError(
                "Element type of an empty batch is unknown: pass dtype=... to create it."
            )
        lay = layout if layout is not None else src_layout
        ndim = samples[0].ndim if samples else (len(lay) if lay else 0)
        self._samples = samples
        self._dense = dense
        self._ready = _ho.mark(samples[0]) if samples else None  # on the current stream
        self._bs = len(samples)
        self._dtype = src_dtype
        self._layout = validate_layout(lay, ndim)
        self._device = dev
        self._external = external and not copied

    @classmethod
    def _wrap(
        cls,
        samples: list[Any],
        dtype: _dt.DType,
        layout: str | None,
        dev: Device,
        dense: Any = None,
        ready: _ho.Ready | None = None,
    ) -> Batch:
        """Fast internal constructor from storage (no checks); ``ready``: see :mod:`.handoff`."""
        b = cls.__new__(cls)
        b._ready = ready
        b._samples = samples
        b._dense = dense
        b._bs = len(samples)
        b._dtype = dtype
        b._layout = layout
        b._device = dev
        b._src = None
        b._external = False
        b._sources = None
        b._kept = None
        b._step = None
        return b

    # --- lazy evaluation -------------------------------------------------------------------
    def _resolved(self) -> list[Any]:
        if self._samples is None:
            self._resolve()
        return self._samples  # type: ignore[return-value]

    def _resolve(self) -> None:
        src = self._src
        if src is None:
            return
        inv, out_idx, meta = src
        out = inv.wait()[out_idx]
        if meta is not None and out._samples:
            _meta.check(meta, out._dtype, out._samples[0].ndim, out._layout, inv.name)
        self._samples = out._samples
        self._ready = out._ready
        self._bs = out._bs
        self._sources = out._sources
        self._kept = out._kept
        self._dense = out._dense
        self._dtype = out._dtype
        self._layout = out._layout
        self._src = None

    @property
    def _invocation_result(self) -> InvocationResult:
        """Whether the call making this value has run (the reference's tests read it)."""
        return InvocationResult(self)

    @property
    def _storage(self) -> BatchStorage:
        """The samples with the reference's backend tensor-list reads
        (``headrace._core.storage_view``)."""
        return BatchStorage(self)

    def evaluate(self) -> Batch:
        """Run the pending computation (a no-op for concrete data); returns ``self``."""
        if self._samples is None:
            self._resolve()
        return self

    # --- properties ------------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        """Number of samples."""
        if self._bs is None:
            self._resolve()
        return self._bs  # type: ignore[return-value]

    @property
    def dtype(self) -> _dt.DType:
        """Element type."""
        if self._dtype is None:
            self._resolve()
        return self._dtype

    @property
    def device(self) -> Device:
        """Where the samples live."""
        return self._device

    @property
    def layout(self) -> str | None:
        """Per-sample layout (no batch dimension), or None."""
        if self._samples is None and (self._src is None or self._src[2] is None):
            self._resolve()
        return self._layout

    @property
    def ndim(self) -> int:
        """Per-sample number of dimensions."""
        if self._samples is None and self._src is not None and self._src[2] is not None:
            return self._src[2].ndim
        s = self._resolved()
        if not s:
            return len(self._layout) if self._layout else 0
        return int(s[0].ndim)

    @property
    def shape(self) -> list[tuple[int, ...]]:
        """Shapes of the samples, one tuple per sample."""
        return [tuple(s.shape) for s in self._resolved()]

    @property
    def kept(self) -> tuple[int, ...] | None:
        """Which input samples a decoder with ``on_error="skip"`` kept (their indices, in order).

        ``None`` for every other batch. Use it to keep the other outputs of the same reader step
        aligned with the decoded images: ``labels = labels.select(images.kept)``. Until that is
        done, using those other outputs raises :class:`~headrace.BatchSizeMismatchError` once a
        sample was dropped (see :class:`Step`).

        Examples
        --------
        >>> import numpy as np, cv2, headrace as ndd
        >>> png = cv2.imencode(".png", np.zeros((2, 2, 3), np.uint8))[1].ravel()
        >>> files = ndd.batch([png, np.zeros(5, np.uint8), png])
        >>> import warnings; warnings.simplefilter("ignore")
        >>> ndd.decoders.image(files, on_error="skip").kept
        (0, 2)
        """
        if self._samples is None:
            self._resolve()
        return self._kept

    # --- sample selection ------------------------------------------------------------------
    @property
    def tensors(self) -> _TensorsView:
        """Indexable view of the samples: ``[i]`` → Tensor, ``[slice | list]`` → view."""
        return _TensorsView(self, None)

    def select(self, index: Any) -> Tensor | Batch:
        """A sample (int index) or a sub-batch (slice or list of indices)."""
        if index is Ellipsis:
            return self
        if self._step is not None:
            self._step.check(self, index)
        samples = self._resolved()
        if isinstance(index, (int, np.integer)):
            i = int(index)
            if not -len(samples) <= i < len(samples):
                raise IndexError(
                    f"Sample index {i} is out of range for a batch of {len(samples)} samples."
                )
            t = Tensor._wrap(
                samples[i], self._dtype, self._layout, self._device, self._external, self._ready
            )
            if self._sources is not None:
                t._source = self._sources[i]
            return t
        idx = _sample_indices(index, len(samples))
        b = Batch._wrap(
            [samples[i] for i in idx], self._dtype, self._layout, self._device, ready=self._ready
        )
        if self._sources is not None:
            b._sources = [self._sources[i] for i in idx]
        return b

    def __iter__(self) -> Iterator[Tensor]:
        if self._step is not None:
            self._step.check(self)
        samples = self._resolved()
        for i in range(len(samples)):
            yield self.select(i)  # type: ignore[misc]

    @property
    def slice(self) -> _SliceView:
        """Per-sample indexing: ``batch.slice[..., 0]`` indexes every sample."""
        return _SliceView(self)

    # --- conversions -------------------------------------------------------------------------
    def torch(self, copy: bool | None = None, pad: bool = False) -> Any:
        """One ``torch.Tensor`` of shape ``(batch_size, *sample_shape)`` on the batch's device.

        Parameters
        ----------
        copy : bool or None
            None: avoid copying when possible; True: always copy; False: raise if a copy is
            needed.
        pad : bool
            Zero-pad samples of different shapes to the largest extent in every dimension.

        Examples
        --------
        >>> import numpy as np
        >>> import headrace as ndd
        >>> ndd.batch([np.ones(2), np.ones(3)]).torch(pad=True).tolist()
        [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]

        For GPU data, torch's current stream waits (on the GPU, through an event) for the stream
        that produced the samples, and their memory stays valid for work queued on that stream.
        """
        arr, copied = dense_storage(self, pad=pad, allow_copy=copy is not False)
        if isinstance(arr, np.ndarray):
            t = _st.numpy_to_torch(arr, self._dtype)
        else:
            t = arr
        if copy and not copied:
            t = t.clone()
        return t

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """Pickling and copying: the samples once written (GPU results are waited for on the
        current stream), without the ready mark (CUDA events do not pickle), producer or step
        bookkeeping."""
        samples = self._resolved()
        _ho.wait_on_current(self._ready, samples)
        state = {k: getattr(self, k) for k in self.__slots__ if k != "__weakref__"}
        state.update(_samples=samples, _ready=None, _src=None, _step=None, _kept=None)
        return None, state

    def __repr__(self) -> str:
        samples = self._resolved()
        _ho.wait_on_current(self._ready, samples)
        body = ",\n".join(
            "    "
            + np.array2string(
                _st.for_display(s, self._dtype),
                separator=", ",
                prefix="    ",
            )
            for s in samples
        )
        lay = f'layout="{self._layout}", ' if self._layout else ""
        return (
            f'Batch(\n    [\n{body}],\n    dtype={self._dtype}, {lay}device="{self._device}", '
            f"num_samples={len(samples)}, shape={self.shape})"
        )

    @staticmethod
    def broadcast(sample: Any, batch_size: int, device: Any = None, dtype: Any = None) -> Batch:
        """A batch of ``batch_size`` references to one sample.

        Examples
        --------
        >>> import headrace as ndd
        >>> ndd.Batch.broadcast(ndd.tensor([1, 2]), 3).shape
        [(2,), (2,), (2,)]
        """
        if isinstance(sample, Batch):
            raise InvalidArgumentError("Cannot broadcast a Batch")
        t = sample if isinstance(sample, Tensor) else Tensor(sample)
        if device is not None or dtype is not None:
            t = Tensor(t, dtype=dtype, device=device)
        arr = t._resolved_data()
        return Batch._wrap([arr] * batch_size, t._dtype, t._layout, t._device, ready=t._ready)


class Step:
    """The batches a reader yielded together in one step, so that none can be misaligned.

    A decoder called with ``on_error="skip"`` on one of them drops undecodable samples from
    its output. The step then remembers which samples it dropped, and the step's other batches
    (labels, the encoded files) refuse to be used — iterated, indexed, converted, passed to an
    operator — with :class:`~headrace.BatchSizeMismatchError`, until they are aligned with
    ``batch.select(images.kept)``. A pairing of an image with another image's label is thus
    an error, never a silent mistake.

    Examples
    --------
    >>> import numpy as np, headrace as ndd
    >>> step, labels = Step(), ndd.batch([np.int32(0), np.int32(1), np.int32(2)])
    >>> labels._step = step
    >>> step.record("decoders.image", 3, (0, 2), ["a.jpg", "b.jpg", "c.jpg"])
    >>> [int(x) for x in labels.select([0, 2])]
    [0, 2]
    >>> list(labels)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    headrace._core.errors.BatchSizeMismatchError: This batch of 3 samples ... dropped sample 1 ...
    """

    __slots__ = ("drops", "pending")

    def __init__(self) -> None:
        self.pending: list[weakref.ref[Batch]] = []
        #: ``(op, batch size, kept indices, sources)`` of every decode that dropped samples
        self.drops: list[tuple[str, int, tuple[int, ...], Sequence[str | None] | None]] = []

    def watch(self, result: Batch) -> None:
        """Remember the (lazy) output of a skipping decoder fed from this step."""
        self.pending.append(weakref.ref(result))

    def record(
        self, op: str, n: int, kept: tuple[int, ...], sources: Sequence[str | None] | None
    ) -> None:
        """Called by the decode kernel when it dropped samples of a batch of this step."""
        self.drops.append((op, n, tuple(kept), sources))

    def check(self, b: Batch, index: Any = None) -> None:
        """Raise if a decoder dropped samples of this step (``index``: a selection that is
        exactly a decoder's ``kept`` is the alignment itself, and allowed)."""
        if self.pending:
            pending, self.pending = self.pending, []
            for ref in pending:  # wait for the skipping decoders fed from this step
                r = ref()
                if r is not None and r._samples is None:
                    try:
                        r._resolve()
                    except Exception:  # it surfaces where the images are used
                        pass
        if not self.drops:
            return
        if index is not None and isinstance(index, (list, tuple, range, np.ndarray)):
            want = tuple(int(i) for i in index)
            if any(want == kept for _, _, kept, _ in self.drops):
                return
        op, n, kept, sources = self.drops[0]
        dropped = [i for i in range(n) if i not in set(kept)]
        what = ", ".join(
            f"{i}" + (f" ({sources[i]!r})" if sources and i < len(sources) and sources[i] else "")
            for i in dropped[:5]
        ) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
        raise BatchSizeMismatchError(
            f"This batch of {b._bs} samples comes from the same reader step as the input of "
            f'{op}(on_error="skip"), which dropped sample{"s" if len(dropped) > 1 else ""} '
            f"{what}; its samples no longer line up with that decoder's output. Align it first: "
            "`batch = batch.select(images.kept)`, where `images` is the decoder's output."
        )


class _TensorsView:
    """Read-only view of a batch's samples (``batch.tensors``)."""

    __slots__ = ("_batch", "_idx")

    def __init__(self, b: Batch, idx: list[int] | None) -> None:
        self._batch = b
        self._idx = idx

    def _indices(self) -> list[int]:
        return self._idx if self._idx is not None else list(range(self._batch.batch_size))

    def __len__(self) -> int:
        return len(self._idx) if self._idx is not None else self._batch.batch_size

    def __getitem__(self, index: Any) -> Any:
        idx = self._indices()
        if isinstance(index, (int, np.integer)):
            i = int(index)
            if not -len(idx) <= i < len(idx):
                raise IndexError(f"Sample index {i} is out of range for {len(idx)} samples.")
            return self._batch.select(idx[i])
        return _TensorsView(self._batch, [idx[i] for i in _sample_indices(index, len(idx))])

    def __iter__(self) -> Iterator[Tensor]:
        for i in self._indices():
            yield self._batch.select(i)  # type: ignore[misc]

    def tolist(self) -> list[Tensor]:
        """The samples as a list of Tensors."""
        return list(self)

    def as_batch(self, copy: bool = False) -> Batch:
        """The selected samples as a Batch."""
        b = self._batch.select(self._indices()) if self._idx is not None else self._batch
        return batch(b) if copy else b  # type: ignore[return-value]

    def select(self, index: Any) -> Any:
        """Same as indexing."""
        return self[index]


class _SliceView:
    """``batch.slice[...]``: the same index applied inside every sample."""

    __slots__ = ("_batch",)

    def __init__(self, b: Batch) -> None:
        self._batch = b

    def __getitem__(self, index: Any) -> Batch:
        return _op("subscript")(self._batch, index)


def split_dense(arr: Any) -> list[Any]:
    """Views of the samples of an array whose first dimension is the batch (0-d stay arrays)."""
    return [arr[i, ...] for i in range(arr.shape[0])]


def _sample_indices(index: Any, n: int) -> list[int]:
    if isinstance(index, slice):
        return list(range(n))[index]
    if isinstance(index, (list, tuple, np.ndarray, range)):
        out = []
        for i in index:
            i = int(i)
            if not -n <= i < n:
                raise IndexError(f"Sample index {i} is out of range for {n} samples.")
            out.append(i % n)
        return out
    raise InvalidTypeError(
        f"Select samples with an int, a slice or a list of ints (got {type(index).__name__})."
    )


def _import_samples(
    tensors: Any, want_dtype: _dt.DType | None
) -> tuple[list[Any], _dt.DType | None, str | None, Any, bool, bool]:
    """(samples, dtype, layout, dense, copied, external) for the accepted inputs."""
    if isinstance(tensors, Batch):
        if tensors._step is not None:
            tensors._step.check(tensors)
        s = tensors._resolved()
        return list(s), tensors._dtype, tensors._layout, tensors._dense, False, tensors._external
    if (
        isinstance(tensors, Tensor)
        or isinstance(tensors, np.ndarray)
        or _st.is_torch(tensors)
        or (hasattr(tensors, "__dlpack_device__") and not isinstance(tensors, (list, tuple)))
    ):
        if isinstance(tensors, Tensor):
            arr, lay, external = tensors._resolved_data(), tensors._layout, tensors._external
            dt = tensors._dtype
            lay = lay[1:] if lay else None
        else:
            arr, _ = _st.import_data(tensors, None)
            lay, external, dt = None, True, _st.dtype_of(arr)
        if arr.ndim == 0:
            raise InvalidArgumentError("Cannot create a batch from a scalar")
        return split_dense(arr), dt, lay, arr, False, external
    if isinstance(tensors, (np.generic, int, float, bool)):
        raise InvalidArgumentError("Cannot create a batch from a scalar")
    if not isinstance(tensors, (list, tuple)):
        if tensors is None:
            raise InvalidTypeError("Batch: expected a list of samples or an array (got None).")
        try:
            tensors = list(tensors)
        except TypeError:
            raise InvalidTypeError(
                f"Cannot create a batch from {type(tensors).__name__}: pass a list of samples or "
                "an array whose first dimension is the batch."
            ) from None
    if not tensors:
        return [], want_dtype, None, None, False, False
    fast = _same_kind_arrays(tensors)  # (want_dtype applies to Python lists, not to arrays)
    if fast is not None:
        return list(tensors), fast, None, None, False, True
    samples: list[Any] = []
    dt: _dt.DType | None = None
    lay: str | None = None
    copied = False
    external = False
    for i, x in enumerate(tensors):
        if x is None:
            raise InvalidTypeError(f"Batch: samples cannot be None. Got `None` at index {i}.")
        if isinstance(x, Batch):
            raise InvalidArgumentError("A list of Batch objects is not a valid argument type")
        if isinstance(x, Tensor):
            arr, xdt, xl = x._resolved_data(), x._dtype, x._layout
            external |= x._external
        else:
            x = _types.native(x)
            arr, c = _st.import_data(x, want_dtype if _is_python(x) else None)
            xdt = _st.enum_dtype_of(x) if _is_python(x) else None
            xdt = xdt or _st.source_dtype(x, arr)
            xl = None
            copied |= c
            external |= not c
        if samples and xdt != dt:
            # every sample takes the batch's type, set by its first sample, as the reference
            # does: Python numbers by a plain conversion ([1.0, 2] is float32, [1, 2.7] int32
            # [1, 2], [[], [1]] float32), arrays of another type rounded and saturated
            plain = dt is not _dt.bfloat16 and xdt is not _dt.bfloat16  # (bf16 host: bits)
            if isinstance(arr, np.ndarray) and not _is_python(x) and plain:
                arr = saturate(arr, np.dtype(dt.numpy))
            else:
                arr = _st.cast(arr, dt, xdt)
            xdt = dt
        if samples:
            if arr.ndim != samples[0].ndim:
                raise InvalidArgumentError(
                    f"Batch: all samples must have the same number of dimensions; sample {i} has "
                    f"{arr.ndim}, sample 0 has {samples[0].ndim}."
                )
            if xl is not None and lay is not None and xl != lay:
                raise InvalidArgumentError(
                    f"Batch: all samples must have the same layout; sample {i} is {xl!r}, "
                    f"earlier ones {lay!r}."
                )
            if _device_of(arr) != _device_of(samples[0]):
                arr = _st.move(arr, _device_of(samples[0]), xdt)
        else:
            dt = xdt
        lay = lay or xl
        samples.append(arr)
    return samples, dt, lay, None, copied, external and not copied


def _same_kind_arrays(tensors: list[Any] | tuple[Any, ...]) -> _dt.DType | None:
    """The dtype of a list of numpy arrays of one supported numpy dtype and one number of
    dimensions (the usual batch, taken as it is), else None (checked sample by sample)."""
    first = tensors[0]
    if type(first) is not np.ndarray or first.dtype.kind not in "biuf":
        return None
    dtype, ndim = first.dtype, first.ndim
    for x in tensors:
        if type(x) is not np.ndarray or x.dtype != dtype or x.ndim != ndim:
            return None
    return _st.dtype_of(first)


def _wait_for_sources(tensors: Any) -> None:
    """Make torch's current stream wait for the GPU Tensors/Batches a new batch is made of."""
    if isinstance(tensors, Batch):
        if tensors._device.device_type == "gpu":
            _ho.wait_on_current(tensors._ready, tensors._resolved())
    elif isinstance(tensors, Tensor):
        if tensors._device.device_type == "gpu":
            _ho.wait_on_current(tensors._ready, [tensors._resolved_data()])
    elif isinstance(tensors, (list, tuple)):
        for x in tensors:
            if isinstance(x, Tensor) and x._device.device_type == "gpu":
                _ho.wait_on_current(x._ready, [x._resolved_data()])


def _is_python(x: Any) -> bool:
    return isinstance(x, (list, tuple, int, float, bool))


def dense_storage(b: Batch, *, pad: bool, allow_copy: bool = True) -> tuple[Any, bool]:
    """One array ``(N, ...)`` holding the batch; returns (array, copied)."""
    if b._step is not None:
        b._step.check(b)
    samples = b._resolved()
    if b._dense is not None:
        _ho.wait_on_current(b._ready, [b._dense])
        return b._dense, False
    if samples:
        _ho.wait_on_current(b._ready, samples)  # stacking runs on the current stream
    if not samples:
        raise InvalidArgumentError("Cannot convert an empty batch to a dense tensor.")
    shapes = {tuple(s.shape) for s in samples}
    if not allow_copy:
        raise InvalidArgumentError("This batch cannot be converted to a tensor without a copy.")
    if len(shapes) == 1:
        if isinstance(samples[0], np.ndarray):
            return np.stack(samples), True
        import torch

        return torch.stack(samples), True
    if not pad:
        raise RaggedBatchError(
            f"The batch has a non-uniform shape ({len(shapes)} different sample shapes), so it "
            "cannot be made dense. To pad the samples to a common shape, the `pad` argument "
            "must be ``True``."
        )
    ndim = samples[0].ndim
    out_shape = (len(samples),) + tuple(max(s.shape[d] for s in samples) for d in range(ndim))
    if isinstance(samples[0], np.ndarray):
        out = np.zeros(out_shape, dtype=samples[0].dtype)
    else:
        import torch

        out = torch.zeros(out_shape, dtype=samples[0].dtype, device=samples[0].device)
    for i, s in enumerate(samples):
        out[(i,) + tuple(slice(0, e) for e in s.shape)] = s
    return out, True


def batch_to_tensor(b: Batch, *, pad: bool = False, device: Any = None) -> Tensor:
    """``ndd.as_tensor(batch)``: one tensor with a leading sample dimension.

    Like an operator, it is lazy in ``eager``/``deferred`` mode: an error (a ragged batch
    without ``pad=True``) surfaces where the result is used, with the call's line in the
    traceback.
    """
    from headrace._core import callsite
    from headrace._core.eval_mode import EvalMode
    from headrace._core.invocation import Invocation

    def run() -> tuple[Batch]:
        arr, _ = dense_storage(b, pad=pad)
        lay = ("N" + b._layout) if b._layout else None
        return (Batch._wrap([arr], b.dtype, lay, b._device, ready=_ho.mark(arr)),)

    mode = EvalMode.current()
    if mode.value >= 2 or (b._samples is not None and b._dense is not None):
        out = run()[0]
        arr = out._samples[0]  # type: ignore[index]
        lay = ("N" + b._layout) if b._layout else None
        t = Tensor._wrap(arr, b.dtype, lay, b._device, ready=out._ready)
    else:
        inv = Invocation(run, "as_tensor", callsite.capture(2), deferred=mode is EvalMode.deferred)
        t = Tensor(invocation_result=(inv, 0, 0, None, b._device))
    if device is not None:
        t = t.to_device(device)
    return t


def batch(tensors: Any, dtype: Any = None, device: Any = None, layout: str | None = None) -> Batch:
    """Create a Batch holding copies of the samples.

    Parameters
    ----------
    tensors : list of tensor-likes, Batch, or one array
        Samples (same rank, dtype and layout; shapes may differ). A single array's first
        dimension is the batch dimension.
    dtype, device, layout : optional
        Conversion targets; ``layout`` describes one sample.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.batch(np.zeros((4, 8, 8, 3), np.uint8), layout="HWC").batch_size
    4
    """
    b = Batch(tensors, dtype=dtype, device=device, layout=layout, copy=True)
    _maybe_sync(b)
    return b


def as_batch(
    tensors: Any, dtype: Any = None, device: Any = None, layout: str | None = None
) -> Batch:
    """Wrap samples as a Batch without copying when possible.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> a = np.zeros((2, 3), np.float32)
    >>> np.shares_memory(np.asarray(ndd.as_batch([a]).tensors[0]), a)
    True
    """
    if isinstance(tensors, Batch):
        if dtype is None and device is None and (layout is None or layout == tensors.layout):
            return tensors
    tensors = unwrap_proxy(tensors)
    b = Batch(tensors, dtype=dtype, device=device, layout=layout)
    _maybe_sync(b)
    return b


__all__ = ["Batch", "RaggedBatchError", "as_batch", "batch"]
