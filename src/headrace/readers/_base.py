"""The reader base class: epochs, batching, shuffling, sharding, prefetching and state.

A reader owns a *dataset* (anything with ``len()``, ``read(i)`` returning one sample's output
arrays, ``source(i)`` naming where sample ``i`` comes from, and ``read_errors``, the exception
types that mean "this sample cannot be read"; optionally ``read_batch(indices, skip)``, which
reads several samples at once: a list of their arrays in order, ``None`` for an unreadable
sample when ``skip``, else raising that sample's error). The base class turns it into epochs:

* **Data epochs.** Data epoch ``e`` is one pass over the shard read in ``e`` (the shard advances
  every epoch unless ``stick_to_shard``), in a fresh permutation seeded by ``(seed, e)`` when
  shuffling. ``next_epoch()`` yields the rest of the current data epoch, cut into batches.
* **Last batch.** ``"fill"`` (default, the reference's behaviour): every batch is full; the
  reader is one continuous stream over the data epochs and one ``next_epoch()`` call yields
  ``ceil(shard_size / batch_size)`` batches of it, the last one topped up with the next data
  epoch's first samples (so the next call starts after them). Exact epochs, one pass over the
  shard per call: ``"partial"`` (the last batch may be smaller), ``"drop"`` (it is dropped),
  ``"pad"`` (also ``pad_last_batch=True``: every shard is padded to ``ceil(n / num_shards)``
  samples and the last batch is completed, both by repeating the last sample, so every rank
  yields the same number of full batches).
* **Direct calls.** ``reader()`` returns the stream's next sample, ``reader(batch_size=N)`` its
  next full batch, like the reference's readers; a reader is used either this way or through
  ``next_epoch()``.
* **State.** The reader's position is the next sample the *consumer* will get: a data epoch and
  an index into that epoch's order (with ``"fill"`` also how far the current call has come).
  ``get_state()`` returns it (with the seed and sharding) as a JSON-able :class:`ReaderState`; a
  fresh reader given that state continues exactly where the consumer stopped, in every mode.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import os
import secrets
import weakref
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np

from headrace._core.batch import Batch, Step
from headrace._core.device import CPU, Device
from headrace._core.dtype import DType
from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace._core.sources import SampleSources
from headrace._core.tensor import Tensor
from headrace._exec.producer import END, Emit, Producer
from headrace.capture._entry import INVALID_READER, mode_name, reader_loop
from headrace.capture._workers import WorkerRequest
from headrace.readers import _sharding as sh
from headrace.readers._read_ahead import ReadAhead, Upcoming

STATE_VERSION = 2  # 2: the data set's fingerprint and the last-batch mode are stored
_MASK64 = (1 << 64) - 1
_MAX_STATE_INT = 1 << 62  # epochs, positions and counts of a state stay below this
_GLOBAL_SHUFFLE_SEED = 0x5EED_F11E  # shuffle_after_epoch without seed: equal on every rank
_MIX_ERROR = "Cannot mix `samples`, `batches` and `_run`/`__call__` on the same reader."
_names = itertools.count()


class Dataset(Protocol):
    """What a concrete reader hands to the base class (see the module's description, also for
    the optional ``read_batch``)."""

    read_errors: tuple[type[BaseException], ...]

    def __len__(self) -> int: ...

    def read(self, index: int) -> tuple[np.ndarray, ...]: ...

    def source(self, index: int) -> str | None: ...


#: The fields a state must share with the reader that resumes it, and what they describe.
#: (The shuffling comes before the fingerprint: ``random_shuffle`` also orders a file list the
#: reference's way before sharding, which a fingerprint would report as another order.)
_IDENTITY = (
    ("dataset_size", "data set (of another size)"),
    ("random_shuffle", "shuffling"),
    ("global_shuffle", "shuffling (shuffle_after_epoch)"),
    ("fingerprint", "data set (other files, or the same files in another order)"),
    ("num_shards", "sharding"),
    ("shard_id", "shard"),
    ("stick_to_shard", "sharding"),
    ("last_batch", "last-batch mode"),
)


class ReaderState(dict):  # type: ignore[type-arg]
    """A reader's JSON-able state; ``str()`` is compact JSON and compares equal to the state."""

    def __str__(self) -> str:
        return json.dumps(self, separators=(",", ":"), sort_keys=True)

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, bytes)):
            try:
                other = _parse_state(other)
            except (InvalidArgumentError, InvalidTypeError):
                return False
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(str(self))


def _parse_state(value: Any) -> dict[str, Any]:
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("ascii")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise InvalidArgumentError(f"Invalid reader state string ({e}).") from None
    if not isinstance(value, dict):
        raise InvalidTypeError(
            "A reader state must be a ReaderState, a dict or its string "
            f"(got {type(value).__name__})."
        )
    kind = value.get("kind", "reader")
    if kind != "reader":
        raise InvalidArgumentError(
            f"Invalid reader state: it is the state of {kind!r}, not of a reader; restore it into "
            "the object it was saved from."
        )
    version = value.get("version")
    if version != STATE_VERSION:
        older = (
            " It was written by an older headrace, without the data set's fingerprint, so the "
            "resume could not be checked; start the epoch again."
            if version == 1
            else ""
        )
        raise InvalidArgumentError(
            f"Unsupported reader state version {version!r} "
            f"(this headrace writes version {STATE_VERSION}).{older}"
        )
    return dict(value)


# field -> (type, what) of a reader state; checked before any value is used
_STATE_FIELDS: dict[str, tuple[type, str]] = {
    "seed": (int, "an integer in [0, 2**64)"),
    "epoch": (int, "an integer in [0, 2**62]"),
    "position": (int, "an integer in [0, 2**62]"),
    "call": (int, "an integer in [0, 2**62]"),
    "call_samples": (int, "an integer in [0, 2**62]"),
    "skipped": (int, "a non-negative integer"),
    "dataset_size": (int, "a positive integer"),
    "shard_id": (int, "a non-negative integer"),
    "num_shards": (int, "a positive integer"),
    "stick_to_shard": (bool, "true or false"),
    "random_shuffle": (bool, "true or false"),
    "global_shuffle": (bool, "true or false"),
    "last_batch": (str, "'partial', 'drop', 'pad' or 'fill'"),
    "fingerprint": (str, "a hex string"),
}


def _check_state_fields(name: str, s: dict[str, Any]) -> None:
    """Every field present, of its exact type (no bool for an int), in its range."""
    for key, (typ, what) in _STATE_FIELDS.items():
        if key not in s:
            raise InvalidArgumentError(
                f"Reader {name!r}: invalid state: the field {key!r} is missing."
            )
        v = s[key]
        ok = type(v) is typ
        if ok and typ is int:
            ok = v >= 0 and v <= (_MASK64 if key == "seed" else _MAX_STATE_INT)
            ok = ok and (v >= 1 if key in ("dataset_size", "num_shards") else True)
        if ok and key == "last_batch":
            ok = v in ("partial", "drop", "pad", "fill")
        if not ok:
            raise InvalidArgumentError(
                f"Reader {name!r}: invalid state: {key!r} must be {what} (got {v!r})."
            )


def _fingerprint(dataset: Dataset) -> str:
    """A digest of the samples' sources in dataset order (their common directory left out,
    so that a data set moved elsewhere keeps it)."""
    n = len(dataset)
    sources = [dataset.source(i) or "" for i in range(n)]
    # the common leading characters, cut back to a directory ('/'): not a path operation, as
    # sources may be "path[key]" or "path:member"
    prefix = os.path.commonprefix(sources) if n > 1 else sources[0] if n else ""  # noqa: RUF071
    cut = prefix.rfind("/") + 1
    h = hashlib.sha256(f"{n}\n".encode())
    h.update("\0".join(src[cut:] for src in sources).encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:32]


@dataclass(frozen=True)
class EpochPlan:
    """Which samples, in which order, data epoch ``e`` reads (pure and thread-safe).

    Examples
    --------
    >>> plan = EpochPlan(size=5, num_shards=2, shard_id=0, stick_to_shard=True,
    ...                  random_shuffle=False, global_shuffle=False, seed=0)
    >>> plan.order(0, pad=False).tolist(), plan.order(0, pad=True).tolist()
    ([0, 1], [0, 1, 1])
    """

    size: int
    num_shards: int
    shard_id: int
    stick_to_shard: bool
    random_shuffle: bool
    global_shuffle: bool
    seed: int

    def _permutation(self, n: int, epoch: int, stream: int) -> np.ndarray:
        key = (self.seed & _MASK64) | ((epoch * 2 + stream) << 64)
        return np.random.Generator(np.random.Philox(key=key)).permutation(n)

    def order(self, epoch: int, pad: bool) -> np.ndarray:
        """Dataset indices of data epoch ``epoch``, padded to the common shard size if ``pad``."""
        n, k = self.size, self.num_shards
        base = self._permutation(n, epoch, 0) if self.global_shuffle else np.arange(n)
        shard = sh.shard_for_epoch(self.shard_id, epoch, k, self.stick_to_shard)
        lo, hi = sh.shard_bounds(n, k, shard)
        idx = base[lo:hi]
        if self.random_shuffle:
            idx = idx[self._permutation(len(idx), epoch, 1)]
        if pad and len(idx):
            extra = sh.padded_shard_size(n, k) - len(idx)
            idx = np.concatenate([idx, np.full(extra, idx[-1], idx.dtype)])
        return idx


class _Cursor:
    """Where a producer stands in the stream of data epochs from ``(epoch, pos)`` on; ``take``
    hands out the next indices a batch at a time (as Python ints, without a tuple per sample)."""

    def __init__(self, plan: EpochPlan, epoch: int, pos: int, pad: bool) -> None:
        self.plan, self.pad = plan, pad
        self.epoch, self.pos = epoch, pos
        self.order: np.ndarray | None = None  # this data epoch's order, made when first needed
        self.first = True  # the first data epoch has not ended yet

    def take(self, n: int, through: bool) -> tuple[list[int], tuple[int, int], bool]:
        """The next ``n`` (at least 1) indices, the position after them, and whether the stream
        ended with them: at the end of the first data epoch unless ``through``, or because the
        epochs are empty. The position after an epoch's last sample is ``(epoch + 1, 0)``."""
        out: list[int] = []
        while True:
            order = self.order
            if order is None:
                order = self.order = self.plan.order(self.epoch, self.pad)
            size = len(order)
            end = min(self.pos + n - len(out), size)
            out += order[self.pos : end].tolist()
            self.pos = end
            if end < size:
                return out, (self.epoch, end), False
            self.epoch, self.pos, self.order = self.epoch + 1, 0, None
            ended = (self.first and not through) or size == 0
            self.first = False
            if ended or len(out) >= n:
                return out, (self.epoch, 0), ended

    def upcoming(self, batch_size: int, through: bool) -> Upcoming:
        """``upcoming(n)``: the batches this cursor will hand out next, about ``n`` samples in
        all, taken from a copy of it (this cursor stays where it is)."""

        def upcoming(n: int) -> list[list[int]]:
            ahead = copy.copy(self)
            groups: list[list[int]] = []
            while n > 0:
                group, _, ended = ahead.take(batch_size, through)
                if group:
                    groups.append(group)
                    n -= len(group)
                if ended:
                    break
            return groups

        return upcoming


def _group_reader(
    dataset: Dataset,
    skip: bool,
    cursor: _Cursor | None = None,
    batch_size: int = 0,
    through: bool = False,
    total: int | None = None,
) -> Callable[[list[int]], list[Any]]:
    """``read(indices)``: the samples' arrays, in order, ``None`` for an unreadable sample when
    ``skip`` (else its error is raised). Uses the dataset's ``read_batch`` when it has one, and
    its ``read_groups`` (with the batches that follow, on ``cursor``, up to ``total`` samples)
    when it has that too."""
    read_batch = getattr(dataset, "read_batch", None)
    if read_batch is not None:
        read_groups = getattr(dataset, "read_groups", None)
        if read_groups is not None and cursor is not None and batch_size:
            upcoming = cursor.upcoming(batch_size, through)
            return ReadAhead(read_groups, read_batch, skip, upcoming, total=total)
        return partial(read_batch, skip=skip)
    read, errors = dataset.read, dataset.read_errors

    def read_each(indices: list[int]) -> list[Any]:
        out: list[Any] = []
        for index in indices:
            try:
                out.append(read(index))
            except errors:
                if not skip:
                    raise
                out.append(None)
        return out

    return read_each


def _keep(
    group: list[int], arrays: list[Any], samples: list[Any], indices: list[int], run: int
) -> tuple[int, int]:
    """Append a group's readable samples (``None``: unreadable, skipped) and their dataset
    indices; return how many were skipped and the run of consecutive failures it ends with
    (``run`` is the run before the group)."""
    if None not in arrays:
        samples += arrays
        indices += group
        return 0, (0 if group else run)
    skipped = 0
    for index, a in zip(group, arrays):
        if a is None:
            skipped += 1
            run += 1
            continue
        run = 0
        samples.append(a)
        indices.append(index)
    return skipped, run


def _produce(
    plan: EpochPlan,
    dataset: Dataset,
    start: tuple[int, int],
    batch_size: int,
    last_batch: str,
    skip: bool,
    emit: Emit,
) -> None:
    """Read one exact epoch's batches (``last_batch`` not ``"fill"``) and emit
    ``(samples, sources, position, skipped)`` items (``sources``: a :class:`SampleSources`).

    Each item's position is where the consumer stands after receiving it; the last item carries
    the end position of the whole call (so an item is held back until the next one is known).
    """
    name = dataset.source
    pending: list[Any] | None = None
    samples: list[tuple[np.ndarray, ...]] = []
    indices: list[int] = []
    skipped = 0
    end = (start[0] + 1, 0)

    def flush(position: tuple[int, int]) -> bool:
        nonlocal pending, samples, indices, skipped
        ok = True
        if pending is not None:
            ok = emit(tuple(pending))
        pending = [samples, SampleSources(name, indices), position, skipped]
        samples, indices, skipped = [], [], 0
        return ok

    cursor = _Cursor(plan, start[0], start[1], last_batch == "pad")
    read = _group_reader(dataset, skip, cursor, batch_size, False)
    try:
        while True:
            group, position, ended = cursor.take(batch_size - len(samples), False)
            if group:
                skipped += _keep(group, read(group), samples, indices, 0)[0]
                if len(samples) == batch_size and not flush(position):
                    return
            if ended:
                if not samples or last_batch == "drop":
                    break
                while last_batch == "pad" and len(samples) < batch_size:
                    samples.append(tuple(a.copy() for a in samples[-1]))
                    indices.append(indices[-1])
                flush(end)
                break
    except BaseException:
        if pending is not None:  # deliver what was read before the failing sample
            emit(tuple(pending))
        raise
    if pending is not None:
        pending[2] = end
        pending[3] += skipped
        emit(tuple(pending))
    elif skipped:
        emit(([], SampleSources(name, []), end, skipped))


def _produce_stream(
    plan: EpochPlan,
    dataset: Dataset,
    start: tuple[int, int],
    batch_size: int,
    batches: int,
    skip: bool,
    emit: Emit,
) -> None:
    """Read ``batches`` full batches from the continuous stream of data epochs starting at
    ``start`` (``last_batch="fill"`` and direct calls) and emit them like :func:`_produce`.

    Unreadable samples (``skip``) are replaced by the following ones; when a whole data epoch's
    worth of consecutive samples fails, the call ends early instead of looping forever.
    """
    name = dataset.source
    samples: list[tuple[np.ndarray, ...]] = []
    indices: list[int] = []
    skipped = run = made = 0
    position = start
    limit = max(plan.size, 1)
    if batches <= 0:
        return
    cursor = _Cursor(plan, start[0], start[1], False)
    # (the groups the loop below takes: a batch, or a whole data epoch when that is smaller)
    read = _group_reader(dataset, skip, cursor, min(batch_size, limit), True, batches * batch_size)
    while True:
        # never more than the consecutive failures left before giving up (see below)
        group, after, ended = cursor.take(min(batch_size - len(samples), limit - run), True)
        if group:
            lost, run = _keep(group, read(group), samples, indices, run)
            skipped += lost
            position = after
        if run >= limit:  # nothing readable left: end the call rather than spin
            break
        if len(samples) == batch_size:
            made += 1
            item = (samples, SampleSources(name, indices), position, skipped)
            if not emit(item) or made == batches:
                return
            samples, indices, skipped = [], [], 0
        if ended:
            break
    if samples or skipped:  # ended early: what was read still reaches the consumer
        emit((samples, SampleSources(name, indices), position, skipped))


def _plain_arg(name: str, value: Any) -> Any:
    """Constructor arguments: no batches; 0-D CPU tensors become Python scalars."""
    if isinstance(value, Batch):
        raise InvalidArgumentError(
            f"Readers cannot be constructed with batch keyword arguments (got a Batch for {name})."
        )
    if isinstance(value, Tensor) and value.ndim == 0:
        return value.item()
    return value


class _TooFewSamplesError(RuntimeError):
    """The dataset has fewer samples than shards: as in the reference, the reader is made and
    this is raised at its first use. (Paths that do not exist and damaged files are reported
    by the constructor: earlier than the reference, which reports them at the first use too.)"""


def _recording_init(init: Callable[..., None]) -> Callable[..., None]:
    """``init``, first noting the outermost constructor call's arguments in ``_init_args``."""
    sig = inspect.signature(init)
    var_kw = next((p.name for p in sig.parameters.values() if p.kind is p.VAR_KEYWORD), None)

    @functools.wraps(init)
    def constructor(self: Reader, *args: Any, **kwargs: Any) -> None:
        outermost = not self.__dict__.get("_constructing", False)  # (else a subclass's came first)
        if outermost:
            try:
                given = dict(sig.bind(self, *args, **kwargs).arguments)
            except TypeError:  # the constructor itself says what is wrong
                given = {}
            given.pop("self", None)
            given.update(given.pop(var_kw, None) or {})
            tensors = {k: v for k, v in given.items() if isinstance(v, Tensor)}
            self._tensor_arg_names = frozenset(tensors)
            self._raw_tensor_args = {k: v for k, v in tensors.items() if v.ndim}
            self._init_args = {
                k: v.item() if k in tensors else v
                for k, v in given.items()
                if v is not None and k not in self._raw_tensor_args
            }
        self._constructing = True
        try:
            init(self, *args, **kwargs)
        finally:
            if outermost:
                self._constructing = False

    return constructor


def as_path(value: Any, name: str, reader: str) -> str:
    """A path argument (``str``, ``bytes`` or ``os.PathLike``) as ``str``.

    Examples
    --------
    >>> import pathlib
    >>> as_path(pathlib.Path("a") / "b", "file_root", "File")
    'a/b'
    """
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    raise InvalidTypeError(
        f"readers.{reader}: {name} must be a path (str or os.PathLike), got {type(value).__name__}."
    )


def as_paths(value: Any, name: str, reader: str) -> list[str]:
    """A path-list argument: one path or a sequence of paths, as a list of ``str``.

    Examples
    --------
    >>> import pathlib
    >>> as_paths([pathlib.Path("a"), "b"], "files", "File")
    ['a', 'b']
    """
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    if not isinstance(value, Sequence):
        raise InvalidTypeError(
            f"readers.{reader}: {name} must be a path or a list of paths, "
            f"got {type(value).__name__}."
        )
    return [as_path(v, name, reader) for v in value]


def _bool_arg(cls: str, name: str, v: Any) -> bool:
    """A reader's bool parameter: bool/np.bool_ or 0/1 only (``"no"`` is not False)."""
    if isinstance(v, (bool, np.bool_)) or (
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v in (0, 1)
    ):
        return bool(v)
    raise InvalidTypeError(
        f"readers.{cls}: argument {name!r} must be a bool (True/False), got "
        f"{type(v).__name__} {v!r}."
    )


def _positive_int(name: str, value: Any, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidArgumentError(f"{name} must be a positive integer (got {value!r}).")
    return int(value)


class Reader:
    """Base of every reader: create once, then iterate ``next_epoch()`` once per epoch.

    Subclasses set ``_outputs`` (one ``(dtype, layout)`` per output) and ``_dataset`` (see
    :class:`Dataset`), and call ``Reader.__init__`` with the common arguments.
    """

    _outputs: tuple[tuple[DType, str | None], ...] = ()
    _dataset: Dataset
    _global_shuffle: bool = False
    #: The arguments the reader was constructed with, as the reference keeps them: given as
    #: 0-D tensors, as Python scalars; other tensors in ``_raw_tensor_args``; the names of all
    #: given as tensors in ``_tensor_arg_names``; those left out or None are not listed.
    _init_args: dict[str, Any]
    _raw_tensor_args: dict[str, Tensor]
    _tensor_arg_names: frozenset[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None:
            cls.__init__ = _recording_init(init)  # type: ignore[method-assign]

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        shard_id: int | str = 0,
        num_shards: int | str = 1,
        stick_to_shard: bool = False,
        pad_last_batch: bool = False,
        random_shuffle: bool = False,
        initial_fill: int = 1024,
        seed: int | None = None,
        read_ahead: bool | None = None,
        lazy_init: bool | None = None,
        skip_cached_images: bool | None = None,
        prefetch_queue_depth: int = 2,
        dont_use_mmap: bool | None = None,
        tensor_init_bytes: int | None = None,
        enable_checkpointing: bool = False,
        last_batch: str | None = None,
        on_error: str = "raise",
    ) -> None:
        self._prefetcher: Producer | None = None
        self._active: weakref.ref[Generator[Any, None, None]] | None = None
        args = {k: _plain_arg(k, v) for k, v in locals().items() if k not in ("self", "__class__")}
        cls = type(self).__name__
        dev = device if isinstance(device, Device) else Device(str(device))
        if dev.device_type != "cpu":
            raise InvalidArgumentError(
                f"Invalid device {device!r} for readers.{cls}: only 'cpu' is supported (the "
                f"reader is not registered for {dev.device_type}; move its outputs with .gpu())."
            )
        if args["num_inputs"] not in (None, 0):
            raise InvalidArgumentError(f"readers.{cls} takes no inputs (num_inputs={num_inputs}).")
        self._max_batch_size = _positive_int("max_batch_size", args["max_batch_size"])
        self._name = str(name) if name is not None else f"{cls}_{next(_names)}"
        self._shard_id, self._num_shards = sh.resolve_shards(args["shard_id"], args["num_shards"])
        self._stick_to_shard = _bool_arg(cls, "stick_to_shard", args["stick_to_shard"])
        self._random_shuffle = _bool_arg(cls, "random_shuffle", args["random_shuffle"])
        _bool_arg(cls, "pad_last_batch", args["pad_last_batch"])
        _bool_arg(cls, "enable_checkpointing", args["enable_checkpointing"])
        self._initial_fill = _positive_int("initial_fill", args["initial_fill"])
        self._depth = _positive_int("prefetch_queue_depth", args["prefetch_queue_depth"], False)
        self._last_batch = self._resolve_last_batch(args["last_batch"], args["pad_last_batch"])
        self._last_batch_explicit = args["last_batch"] is not None or bool(args["pad_last_batch"])
        if on_error not in ("raise", "skip"):
            raise InvalidArgumentError(f"on_error must be 'raise' or 'skip' (got {on_error!r}).")
        self._skip = on_error == "skip"
        seed = args["seed"]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise InvalidTypeError(f"seed must be an integer (got {type(seed).__name__}).")
        self._seed_given = seed is not None and int(seed) >= 0
        self._seed = int(seed) & _MASK64 if self._seed_given else None
        self._checkpointing = bool(enable_checkpointing)
        self._style: str | None = None  # "samples", "batches" or "_run", fixed by the first use
        self._batch_size: int | None = None
        self._started = False
        self._epoch = 0  # data epoch of the next sample the consumer gets
        self._pos = 0  # its index in that data epoch's order
        self._call = 0  # next_epoch() calls finished ("fill" counts its batches per call)
        self._call_samples = 0  # samples the consumer got in the current call
        self._skipped = 0

    @staticmethod
    def _resolve_last_batch(last_batch: str | None, pad_last_batch: bool) -> str:
        if last_batch is None:
            return "pad" if pad_last_batch else "fill"
        sh.check_last_batch(last_batch)
        if pad_last_batch and last_batch != "pad":
            raise InvalidArgumentError(
                f"pad_last_batch=True contradicts last_batch={last_batch!r} "
                "(pad_last_batch=True means last_batch='pad')."
            )
        return last_batch

    def _finish_init(self) -> None:
        """Called by subclasses once ``_dataset`` is set: checks the size, fixes the seed."""
        n = len(self._dataset)
        if n < self._num_shards:
            # kept for the reader's first use (``next_epoch``, a call, metadata, state), where
            # the reference raises it, worded as its message (which programs and tests match)
            self._deferred_error = _TooFewSamplesError(
                f"readers.{type(self).__name__}: the dataset is smaller than num_shards: "
                f'Assert on "num_shards_ <= Size()" failed: The number of input samples: {n}, '
                f"needs to be at least equal to the requested number of shards: "
                f"{self._num_shards}."
            )
        if self._seed is None:
            global_only = self._global_shuffle and not self._random_shuffle
            self._seed = _GLOBAL_SHUFFLE_SEED if global_only else secrets.randbits(63)

    def _plan(self) -> EpochPlan:
        self._raise_deferred()
        return EpochPlan(
            size=len(self._dataset),
            num_shards=self._num_shards,
            shard_id=self._shard_id,
            stick_to_shard=self._stick_to_shard,
            random_shuffle=self._random_shuffle,
            global_shuffle=self._global_shuffle,
            seed=int(self._seed or 0),
        )

    # --- iteration ------------------------------------------------------------------------
    def next_epoch(
        self,
        batch_size: int | None = None,
        ctx: Any = None,
        capture: bool = False,
        *,
        last_batch: str | None = None,
        compile: bool = False,  # the older spelling of ``capture``
        num_workers: int | None = None,
        multiprocessing_context: Any = None,
    ) -> Generator[tuple[Any, ...], None, None]:
        """Iterate over one epoch of this reader's current shard.

        Parameters
        ----------
        batch_size : int, optional
            Samples per batch; default ``max_batch_size``. Without either, the epoch yields
            tuples of :class:`Tensor` (sample mode), else tuples of :class:`Batch`.
        ctx : EvalContext, optional
            Accepted for compatibility; reading does not depend on it.
        capture : bool
            Capture mode: trace the first step, then run the recorded operator calls ahead of
            the loop body in a background pipeline (needs ``batch_size``; see
            ``headrace.capture``). ``compile=True`` is the older spelling.
        last_batch : {"fill", "partial", "drop", "pad"}, optional
            Keyword-only; overrides the reader's last-batch mode for this call. ``"fill"`` (the
            default, as the reference) keeps every batch full by topping the last one up from
            the next epoch; ``"partial"``, ``"drop"`` and ``"pad"`` give exact epochs (one call
            is one pass over the shard).

        Examples
        --------
        >>> from headrace.readers import File
        >>> r = File(files=[__file__] * 3, labels=[0, 1, 2])
        >>> [lab.torch().flatten().tolist() for _, lab in r.next_epoch(batch_size=2)]
        [[0, 1], [2, 0]]
        >>> [lab.torch().flatten().tolist() for _, lab in r.next_epoch(2, last_batch="partial")]
        [[1, 2]]
        """
        self._raise_deferred()
        if capture or compile:
            bs = batch_size if batch_size is not None else self._max_batch_size
            return reader_loop(
                self,
                bs,
                ctx,
                lambda n: self._start_epoch(n, last_batch),
                compiled=not capture,
                workers=WorkerRequest(num_workers, multiprocessing_context),
            )
        if getattr(self, "_capture_invalid", False):
            raise RuntimeError(INVALID_READER)
        loop = getattr(self, "_capture", None)
        if loop is not None:
            if loop.compiled:
                raise RuntimeError(
                    f"Reader {self._name!r} is used in compiled mode (compile=True) and cannot "
                    "switch to non-compiled mode."
                )
            raise RuntimeError(
                f"Reader {self._name!r} is used in capture mode (capture=True) and cannot switch "
                "to eager mode."
            )
        return self._start_epoch(batch_size, last_batch)

    def _start_epoch(
        self, batch_size: int | None, last_batch: str | None
    ) -> Generator[tuple[Any, ...], None, None]:
        bs = batch_size if batch_size is not None else self._max_batch_size
        style = "samples" if bs is None else "batches"
        if self._style is not None and self._style != style:
            raise RuntimeError(_MIX_ERROR)
        if bs is not None:
            bs = _positive_int("batch_size", _plain_arg("batch_size", bs), False)
            if self._batch_size is None:
                if self._max_batch_size is not None and bs > self._max_batch_size:
                    raise InvalidArgumentError(
                        f"`batch_size` {bs} is larger than the `max_batch_size` "
                        f"{self._max_batch_size} given at construction."
                    )
            elif bs != self._batch_size:
                raise InvalidArgumentError(
                    f"`batch_size` {bs} is different than the `max_batch_size` "
                    f"{self._batch_size} used in the previous call"
                )
        mode = self._last_batch if last_batch is None else sh.check_last_batch(last_batch)
        self._close_active()
        self._style, self._batch_size, self._started = style, bs, True
        if mode == "fill" and bs is None:
            mode = "partial"  # one sample at a time: the same samples, exact epochs
        gen = self._iterate(bs or 1, mode, bs is not None)
        self._active = weakref.ref(gen)
        return gen

    def _close_active(self) -> None:
        gen = self._active() if self._active is not None else None
        if gen is not None:
            try:
                gen.close()
            except ValueError:  # still run by an interrupted capture loop's stopping thread
                pass
        self._active = None
        p = self._prefetcher  # left running by an interrupted stop: end it now
        if p is not None:
            self._prefetcher = None
            p.stop()

    def _call_size(self) -> int:
        """Samples the current ``"fill"`` call yields in all: its shard's size."""
        n, k = len(self._dataset), self._num_shards
        shard = sh.shard_for_epoch(self._shard_id, self._call, k, self._stick_to_shard)
        lo, hi = sh.shard_bounds(n, k, shard)
        return hi - lo

    def _batches_left(self, batch_size: int, last_batch: str | None = None) -> int:
        """Batches the next ``next_epoch(batch_size, last_batch=...)`` call yields (without
        unreadable samples): what is left of the current call or data epoch."""
        mode = self._last_batch if last_batch is None else sh.check_last_batch(last_batch)
        if mode == "fill":
            left = self._call_size() - self._call_samples
            return max(0, -(-left // batch_size))
        n, k = len(self._dataset), self._num_shards
        if mode == "pad":
            size = sh.padded_shard_size(n, k)
        else:
            shard = sh.shard_for_epoch(self._shard_id, self._epoch, k, self._stick_to_shard)
            lo, hi = sh.shard_bounds(n, k, shard)
            size = hi - lo
        return sh.num_batches(max(0, size - self._pos), batch_size, mode)

    def _iterate(
        self, batch_size: int, last_batch: str, batch_mode: bool
    ) -> Generator[tuple[Any, ...], None, None]:
        call_epoch = self._epoch
        start = (self._epoch, self._pos)
        fill = last_batch == "fill"
        if fill:
            produce = partial(
                _produce_stream, self._plan(), self._dataset, start, batch_size,
                self._batches_left(batch_size, "fill"), self._skip,
            )  # fmt: skip
        else:
            produce = partial(
                _produce, self._plan(), self._dataset, start, batch_size, last_batch, self._skip
            )
        prefetcher = Producer(produce, self._depth or 2, f"headrace-reader-{self._name}")
        self._prefetcher = prefetcher
        call_size = self._call_size() if fill else 0
        done = rolled = False
        try:
            while (item := prefetcher.get()) is not END:
                samples, sources, (self._epoch, self._pos), skipped = item
                self._skipped += skipped
                if samples:
                    self._call_samples += len(samples)
                    if fill and self._call_samples >= call_size:  # the call's last batch
                        self._call, self._call_samples, rolled = self._call + 1, 0, True
                    yield self._wrap(samples, sources, batch_mode)
            done = True
        finally:
            prefetcher.stop()
            self._prefetcher = None
            # left early (break or error) before the call's last batch: the next call starts
            # with the next data epoch (a call whose batches were all taken, e.g. with
            # itertools.islice, did not leave early: the reference goes on in the data epoch)
            if not fill and self._epoch <= call_epoch:
                self._epoch, self._pos = call_epoch + 1, 0
            elif fill and not done and self._pos > 0 and not rolled:
                self._epoch, self._pos = self._epoch + 1, 0
            if fill:
                if not rolled:
                    self._call, self._call_samples = self._call + 1, 0
            else:
                self._call, self._call_samples = self._epoch, 0

    # --- direct calls, as the reference's readers ------------------------------------------
    def __call__(self, *, batch_size: int | None = None) -> tuple[Any, ...]:
        """Read the next sample, or the next batch of ``batch_size`` samples.

        The reader is one continuous stream: calls go on across epoch boundaries (every batch is
        full) and shards advance with the data epochs, as with ``last_batch="fill"``.
        ``get_state``/``set_state`` work as with :meth:`next_epoch`; a reader is used either by
        direct calls or by ``next_epoch()``, not both (``RuntimeError``).

        Parameters
        ----------
        batch_size : int, optional
            Samples in the batch; without it the call returns one sample. Fixed by the first
            batch call (at most ``max_batch_size`` when given).

        Returns
        -------
        tuple
            One :class:`Tensor` per output (no ``batch_size``) or one :class:`Batch` per output.

        Examples
        --------
        >>> from headrace.readers import File
        >>> r = File(files=[__file__] * 3, labels=[0, 1, 2])
        >>> data, label = r()
        >>> int(label.item())
        0
        >>> data, label = r(batch_size=3)
        >>> label.torch().flatten().tolist()
        [1, 2, 0]
        """
        self._raise_deferred()
        if getattr(self, "_capture_invalid", False):
            raise RuntimeError(INVALID_READER)
        if getattr(self, "_capture", None) is not None or (
            self._style is not None and self._style != "_run"
        ):
            raise RuntimeError(_MIX_ERROR)
        bs = None if batch_size is None else _plain_arg("batch_size", batch_size)
        if bs is not None:
            bs = _positive_int("batch_size", bs, False)
            if self._batch_size is None:
                if self._max_batch_size is not None and bs > self._max_batch_size:
                    raise InvalidArgumentError(
                        f"`batch_size` {bs} is larger than the `max_batch_size` "
                        f"{self._max_batch_size} given at construction."
                    )
                self._batch_size = bs
            elif bs != self._batch_size:
                raise InvalidArgumentError(
                    f"`batch_size` {bs} is different than the `max_batch_size` "
                    f"{self._batch_size} used in the previous call"
                )
        self._style, self._started = "_run", True
        items: list[Any] = []
        _produce_stream(
            self._plan(), self._dataset, (self._epoch, self._pos), bs or 1, 1, self._skip,
            lambda item: items.append(item) or True,
        )  # fmt: skip
        samples: list[Any] = []
        for got, _, (self._epoch, self._pos), skipped in items:
            samples += got
            self._skipped += skipped
        # (one item, the usual case: its sources stay unformatted)
        sources = items[0][1] if len(items) == 1 else [s for it in items for s in it[1]]
        if len(samples) < (bs or 1):
            raise RuntimeError(
                f"Reader {self._name!r}: no readable sample left (every sample of a data epoch "
                "failed with on_error='skip')."
            )
        return self._wrap(samples, sources, bs is not None)

    def _wrap(
        self, samples: Sequence[tuple[np.ndarray, ...]], sources: Sequence[str | None], batch: bool
    ) -> tuple[Any, ...]:
        if not batch:
            tensors = tuple(
                Tensor._wrap(samples[0][j], dt, layout, CPU)
                for j, (dt, layout) in enumerate(self._outputs)
            )
            for t in tensors:
                t._source = sources[0]
            return tensors
        out = []
        step = Step()  # a decoder skipping samples of one output keeps the others aligned
        for j, (dt, layout) in enumerate(self._outputs):
            b = Batch._wrap([s[j] for s in samples], dt, layout, CPU)
            b._sources = sources  # (immutable: shared by the outputs)
            b._step = step
            out.append(b)
        return tuple(out)

    def __del__(self) -> None:
        prefetcher = getattr(self, "_prefetcher", None)
        if prefetcher is not None:
            prefetcher.stop()

    # --- metadata and state ---------------------------------------------------------------
    def get_metadata(self, batch_size: int | None = None) -> dict[str, int]:
        """Dataset and sharding facts (valid before the first epoch).

        Keys: ``epoch_size`` (whole dataset), ``epoch_size_padded``, ``number_of_shards``,
        ``shard_id``, ``pad_last_batch``, ``stick_to_shard`` (0/1 like the reference) and
        ``skipped`` (samples dropped by ``on_error="skip"`` so far).

        Examples
        --------
        >>> from headrace.readers import File
        >>> File(files=[__file__]).get_metadata()["epoch_size"]
        1
        """
        self._raise_deferred()
        n = len(self._dataset)
        pad = self._last_batch == "pad"
        return {
            "epoch_size": n,
            "epoch_size_padded": sh.epoch_size_padded(n, self._num_shards, pad),
            "number_of_shards": self._num_shards,
            "shard_id": self._shard_id,
            "pad_last_batch": int(pad),
            "stick_to_shard": int(self._stick_to_shard or self._global_shuffle),  # (forced)
            "skipped": self._skipped,
        }

    def get_state(self, *, cuda_stream: Any = None) -> ReaderState:
        """The consumer's position (data epoch, index in it), seed and sharding.

        Needs ``enable_checkpointing=True`` (or an earlier :meth:`set_state`) and a started
        epoch. A fresh reader given this state resumes exactly after the last item received;
        while a ``headrace.pytorch.Loader`` reads ahead of what it has yielded, that is the
        state after the loader's last yielded batch.
        """
        self._raise_deferred()
        delivered = self.__dict__.get("_delivered_state")
        if delivered is not None:
            return ReaderState(delivered)
        return self._current_state()

    def _current_state(self) -> ReaderState:
        """:meth:`get_state` of the reader's own position (batches read ahead included)."""
        if not self._started:  # checked first, as the reference does
            raise RuntimeError(
                f"Reader {self._name!r}: Cannot get the reader's state before its first "
                "iteration. Call `next_epoch` once before calling `get_state`."
            )
        if not self._checkpointing:
            raise RuntimeError(
                f"Reader {self._name!r}: checkpointing is not enabled; construct it with "
                "enable_checkpointing=True."
            )
        return ReaderState(
            version=STATE_VERSION,
            kind="reader",
            type=type(self).__qualname__,
            seed=self._seed,
            epoch=self._epoch,
            position=self._pos,
            call=self._call,
            call_samples=self._call_samples,
            shard_id=self._shard_id,
            num_shards=self._num_shards,
            stick_to_shard=self._stick_to_shard,
            random_shuffle=self._random_shuffle,
            global_shuffle=self._global_shuffle,
            shuffle="philox(seed, epoch)",
            dataset_size=len(self._dataset),
            skipped=self._skipped,
            last_batch=self._last_batch,
            fingerprint=self._dataset_fingerprint(),
        )

    def _dataset_fingerprint(self) -> str:
        fp = getattr(self, "_fingerprint", None)
        if fp is None:
            fp = self._fingerprint = _fingerprint(self._dataset)
        return fp

    def set_state(self, state: Any) -> None:
        """Continue from a state returned by :meth:`get_state` (only before the first epoch)."""
        self._raise_deferred()
        if self._started:
            raise RuntimeError(
                f"Reader {self._name!r}: cannot set the state after iteration has begun."
            )
        if not isinstance(state, (ReaderState, dict, str, bytes, bytearray)):
            raise InvalidTypeError(
                f"set_state expects a ReaderState (or its str / bytes), got {type(state).__name__}."
            )
        s = _parse_state(state)
        name = self._name
        _check_state_fields(name, s)
        mine = self._state_identity()
        for key, what in _IDENTITY:
            if s[key] != mine[key]:
                raise InvalidArgumentError(
                    f"Reader {name!r}: the state is for another {what}: it has {key}="
                    f"{s[key]!r}, this reader has {mine[key]!r}. Restore into a reader built "
                    "with the same files, in the same order, and the same shuffling, sharding and "
                    "last-batch settings."
                )
        saved_type = s.get("type")
        if saved_type is not None and saved_type != type(self).__qualname__:
            raise InvalidArgumentError(
                f"Reader {name!r}: the state is of a {saved_type} reader, this is a "
                f"{type(self).__qualname__}."
            )
        seed, epoch, pos, skipped = s["seed"], s["epoch"], s["position"], s["skipped"]
        call, call_samples = s["call"], s["call_samples"]
        shuffled = self._random_shuffle or self._global_shuffle
        if shuffled and self._seed_given and seed != self._seed:
            raise InvalidArgumentError(
                f"Reader {name!r}: the state was saved with seed={seed}, but this reader was built "
                f"with seed={self._seed}; the shuffled order would differ. Build it with the "
                "saved seed (or without a seed: the state's is then used)."
            )
        plan = dataclasses.replace(self._plan(), seed=seed)
        length = len(plan.order(epoch, self._last_batch == "pad"))
        if pos >= length:
            raise InvalidArgumentError(
                f"Reader {name!r}: invalid state: position {pos} is past the end of data epoch "
                f"{epoch}, which has {length} samples in this shard (positions 0-{length - 1})."
            )
        self._seed, self._epoch, self._pos, self._skipped = seed, epoch, pos, skipped
        self._call, self._call_samples = call, call_samples
        self._checkpointing = True

    def _state_identity(self) -> dict[str, Any]:
        """What a state must agree on with this reader to be resumed by it."""
        return {
            "dataset_size": len(self._dataset),
            "num_shards": self._num_shards,
            "shard_id": self._shard_id,
            "stick_to_shard": self._stick_to_shard,
            "random_shuffle": self._random_shuffle,
            "global_shuffle": self._global_shuffle,
            "last_batch": self._last_batch,
            "fingerprint": self._dataset_fingerprint(),
        }

    def _enable_checkpointing(self) -> None:
        """Turn checkpointing on after construction (``Checkpoint.register`` does this).

        Allowed until the first ``next_epoch``; a reader already iterating without
        checkpointing raises ``RuntimeError``.
        """
        if self._checkpointing:
            return
        loop = getattr(self, "_capture", None)
        if loop is not None:
            mode = mode_name(loop.compiled)
            raise NotImplementedError(
                f"Reader {self._name!r} is used in {mode}, which cannot be combined with "
                "checkpointing."
            )
        if self._started:
            raise RuntimeError(
                f"Reader {self._name!r} is already iterating without checkpointing; construct it "
                "with enable_checkpointing=True, or register it before its first next_epoch()."
            )
        self._checkpointing = True

    def _raise_deferred(self) -> None:
        """Raise what the constructor found wrong with the data (``_TooFewSamplesError``)."""
        err = self.__dict__.get("_deferred_error")
        if err is not None:
            raise err.with_traceback(None)

    def __repr__(self) -> str:
        dataset = self.__dict__.get("_dataset")
        size = "?" if dataset is None else len(dataset)
        return f"readers.{type(self).__name__}(name={self._name!r}, size={size})"


__all__ = ["Dataset", "EpochPlan", "Reader", "ReaderState", "as_path", "as_paths"]
