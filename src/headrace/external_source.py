"""``ExternalSource``: feed Python data (callables, iterables, generators) into headrace."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from headrace._core.batch import Batch, as_batch
from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace._core.tensor import Tensor, as_tensor
from headrace._dispatch.hooks import active_loop
from headrace.capture._entry import external_source_loop
from headrace.capture._workers import WorkerRequest

_CYCLE_MODES = {None: "no", False: "no", "no": "no", True: "quiet", "quiet": "quiet"}
_CYCLE_MODES["raise"] = "raise"


def _per_output(value: Any, n: int, what: str) -> list[Any]:
    """One value per output: a single value is repeated, a list/tuple must have ``n`` items."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise InvalidArgumentError(
                f"ExternalSource: {what}: Expected a sequence of size {n}, got {len(value)}."
            )
        return list(value)
    return [value] * n


def _check_no_parameters(fn: Callable[..., Any]) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: assume callable as is
        return
    required = [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if required:
        raise InvalidArgumentError(
            f"ExternalSource: the source function must take no parameters "
            f"(it requires {', '.join(required)})."
        )


class ExternalSource:
    """A stateful source of Python data; each call returns the next item as Tensor or Batch
    (a Batch when the source gave a Batch or a reference ``TensorListCPU``/``TensorListGPU``).

    Parameters
    ----------
    source : callable, iterable or generator function
        A zero-argument callable (called once per item; raising ``StopIteration`` ends it), an
        iterable (e.g. a list), or a generator function (called to start each pass).
    num_outputs : int
        Outputs per item; with more than one, each item must be a sequence of that length.
    cycle : {None, False, "no", True, "quiet", "raise"}
        What happens at the end of an iterable or generator: ``"no"`` raises ``StopIteration``
        on every later call; ``"quiet"`` restarts at once; ``"raise"`` raises ``StopIteration``
        once and restarts on the next call. Not allowed with a plain callable.
    device : str
        Where outputs are placed (``"cpu"`` or ``"gpu"``), resolved at every call.
    layout, dtype : optional
        For all outputs, or a list with one entry per output.

    Examples
    --------
    >>> import numpy as np
    >>> from headrace.external_source import ExternalSource
    >>> src = ExternalSource([np.arange(3), np.arange(5)], cycle="quiet")
    >>> [src().shape for _ in range(3)]
    [(3,), (5,), (3,)]
    """

    def __init__(
        self,
        source: Any,
        num_outputs: int = 1,
        *,
        cycle: bool | str | None = None,
        device: Any = "cpu",
        layout: str | Sequence[str | None] | None = None,
        dtype: Any = None,
    ) -> None:
        if isinstance(num_outputs, bool) or not isinstance(num_outputs, (int, np.integer)):
            raise InvalidTypeError(f"ExternalSource: num_outputs must be an int ({num_outputs!r}).")
        if num_outputs <= 0:
            raise InvalidArgumentError(
                f"ExternalSource: num_outputs must be positive (got {num_outputs})."
            )
        try:
            self._cycle = _CYCLE_MODES[cycle]
        except (KeyError, TypeError):
            raise InvalidArgumentError(
                f"ExternalSource: cycle must be None, False, True, 'no', 'quiet' or 'raise' "
                f"(got {cycle!r})."
            ) from None
        self._num_outputs = int(num_outputs)
        self._layouts = _per_output(layout, self._num_outputs, "layout")
        self._dtypes = _per_output(dtype, self._num_outputs, "dtype")
        self._device = device
        self._lock = threading.Lock()
        self._restart: Callable[[], Iterator[Any]] | None
        self._fn: Callable[[], Any] | None = None
        if inspect.isgeneratorfunction(source):
            _check_no_parameters(source)
            self._restart = source
        elif hasattr(source, "__iter__"):
            self._restart = lambda: iter(source)
        elif callable(source):
            if cycle is not None:
                raise InvalidArgumentError(
                    "ExternalSource: cycle cannot be used with a callable source; it applies to "
                    "iterables and generator functions."
                )
            _check_no_parameters(source)
            self._fn, self._restart = source, None
        else:
            raise InvalidTypeError(
                "ExternalSource: source must be a callable, an iterable or a generator function "
                f"(got {type(source).__name__})."
            )
        self._it: Iterator[Any] | None = None
        self._exhausted = False
        self._role: str | None = None  # "eager", "driver" or "feeder": locked on first use
        self._capture_loop: Any = None

    # --- pulling --------------------------------------------------------------------------
    def _next_item(self) -> Any:
        with self._lock:
            if self._fn is not None:
                return self._fn()
            assert self._restart is not None
            if self._exhausted:
                if self._cycle == "no":
                    raise StopIteration
                self._exhausted, self._it = False, None  # "raise": restart after one stop
            if self._it is None:
                self._it = self._restart()
            try:
                return next(self._it)
            except StopIteration:
                self._exhausted, self._it = True, None
                if self._cycle != "quiet":
                    raise
            self._exhausted = False
            self._it = self._restart()
            return next(self._it)  # an empty source stops here even when cycling

    def __call__(self, *, batch_size: int | None = None) -> Any:
        loop = active_loop()
        if loop is not None and self._role != "driver":
            return loop.on_feeder_call(self, batch_size)
        if self._role == "driver" and self._capture_loop is not None:
            raise RuntimeError(
                f"{self!r} is already used in a capture-mode loop: it drives the loop through "
                ".captured(), so it cannot be called directly (Instance already used through "
                ".captured() method)."
            )
        if self._role == "feeder" and self._capture_loop is not None:
            raise RuntimeError(f"{self!r} is already used in a capture-mode loop.")
        self._role = "eager"
        return self._pull(batch_size)

    def _pull(self, batch_size: int | None = None) -> Any:
        """Pull the next item, converted (no capture-mode role checks)."""
        """Pull the next item and return it as Tensor / Batch (a tuple for several outputs).

        Parameters
        ----------
        batch_size : int, optional
            Expected batch size: tensors are broadcast to a batch of that size, batches must
            have it.

        Examples
        --------
        >>> import numpy as np
        >>> from headrace.external_source import ExternalSource
        >>> src = ExternalSource(lambda: (np.ones((2, 2)), np.zeros(3)), num_outputs=2)
        >>> [t.shape for t in src()]
        [(2, 2), (3,)]
        >>> src(batch_size=4)[1].shape
        [(3,), (3,), (3,), (3,)]
        """
        item = self._next_item()
        if self._num_outputs == 1:
            values = [item]
        else:
            if not isinstance(item, (list, tuple)) or len(item) != self._num_outputs:
                got = len(item) if isinstance(item, (list, tuple)) else type(item).__name__
                raise InvalidArgumentError(
                    f"ExternalSource: Expected {self._num_outputs} outputs from the source "
                    f"(got {got})."
                )
            values = list(item)
        outs = [self._convert(v, i, batch_size) for i, v in enumerate(values)]
        kinds = {isinstance(o, Batch) for o in outs}
        if len(kinds) > 1:
            raise InvalidTypeError(
                "ExternalSource: the outputs of one item must be all tensors or all batches."
            )
        return outs[0] if self._num_outputs == 1 else tuple(outs)

    def _convert(self, value: Any, i: int, batch_size: int | None) -> Tensor | Batch:
        dtype, layout, device = self._dtypes[i], self._layouts[i], self._device
        if isinstance(value, Batch) or _is_reference_tensor_list(value):
            out = as_batch(value, dtype=dtype, device=device, layout=layout)
            if batch_size is not None and out.batch_size != batch_size:
                raise InvalidArgumentError(
                    f"ExternalSource: Expected batch size {batch_size}, got {out.batch_size}."
                )
            return out
        if isinstance(value, tuple) and len(value) == 0:
            value = np.zeros((0,), np.float32)
        t = as_tensor(value, dtype=dtype, device=device, layout=layout)
        return t if batch_size is None else Batch.broadcast(t, batch_size)

    def captured(
        self,
        batch_size: int | None = None,
        ctx: Any = None,
        *,
        num_workers: int | None = None,
        multiprocessing_context: Any = None,
    ) -> Iterator[Any]:
        """Iterate over this source in capture mode until it raises StopIteration.

        The first step is traced while it runs eagerly; later steps are computed ahead of the
        loop body by a background pipeline (see ``headrace.capture``). ``num_workers`` and
        ``multiprocessing_context`` (keyword-only): compute the steps in worker processes, as
        ``reader.next_epoch(..., capture=True, num_workers=N)`` does (the source itself is
        read in this process).

        Examples
        --------
        >>> import numpy as np
        >>> import headrace as ndd
        >>> src = ndd.ExternalSource(iter([np.ones((2, 3), np.float32)] * 3))
        >>> [ndd.cast(b, dtype=ndd.uint8).shape for b in src.captured(batch_size=2)]
        [[(2, 3), (2, 3)], [(2, 3), (2, 3)], [(2, 3), (2, 3)]]
        """
        return external_source_loop(
            self, batch_size, ctx, workers=WorkerRequest(num_workers, multiprocessing_context)
        )

    def compiled(self, batch_size: int | None = None, ctx: Any = None) -> Iterator[Any]:
        """The older name of :meth:`captured` (its errors use the older words)."""
        return external_source_loop(self, batch_size, ctx, compiled=True)

    def __repr__(self) -> str:
        return f"ExternalSource(num_outputs={self._num_outputs}, cycle={self._cycle!r})"


def _is_reference_tensor_list(value: Any) -> bool:
    """A ``TensorListCPU``/``TensorListGPU`` of the reference: a batch, as the reference says."""
    t = type(value)
    return t.__name__.startswith("TensorList") and t.__module__.startswith("nvidia.dali")


__all__ = ["ExternalSource"]
