"""torchdata nodes over headrace readers and operators (needs ``pip install torchdata``).

* :class:`Reader` yields one ``dict`` of batches per step, named after the reader's outputs.
* :class:`DictMapper` applies a function (headrace operators) to one entry of each dict.
* :class:`ToTorch` turns each dict into a tuple of ``torch.Tensor``.

Chain them and wrap the last one in ``torchdata.nodes.Loader``::

    import headrace as ndd
    from headrace.pytorch import nodes
    from torchdata.nodes import Loader

    reader = nodes.Reader(ndd.readers.File, batch_size=64, file_root="train/")
    images = nodes.DictMapper(reader, lambda jpegs: ndd.decoders.image(jpegs))
    loader = Loader(nodes.ToTorch(images))
    for data, label in loader:
        ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from torchdata.nodes import BaseNode
except ImportError as _e:  # pragma: no cover - exercised only where torchdata is missing
    raise ImportError(
        "headrace.pytorch.nodes needs torchdata (the torchdata.nodes API): "
        "pip install torchdata. headrace.pytorch.Loader works without it."
    ) from _e

from headrace._core.errors import InvalidArgumentError

_DEFAULT_NAMES = ("data", "label")


def _num_outputs(reader: Any) -> int:
    outputs = getattr(reader, "_outputs", None)
    if outputs is None:
        raise InvalidArgumentError(
            f"nodes.Reader: cannot tell how many outputs {type(reader).__name__} has."
        )
    return len(outputs)


class Reader(BaseNode[dict[str, Any]]):
    """A headrace reader as a torchdata node: each ``next()`` is one batch as a dict.

    Parameters
    ----------
    reader_type : type
        A reader class, e.g. ``ndd.readers.File``; built as ``reader_type(**kwargs)``.
    batch_size : int
        Samples per batch (also the reader's ``max_batch_size`` unless given in ``kwargs``).
    output_names : sequence of str, optional
        One name per reader output; default ``("data", "label")`` for two-output readers.
    **kwargs
        Passed to ``reader_type``.
    """

    def __init__(
        self,
        reader_type: Callable[..., Any],
        *,
        batch_size: int,
        output_names: tuple[str, ...] | list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        kwargs.setdefault("max_batch_size", batch_size)
        self.reader = reader_type(**kwargs)
        self.batch_size = batch_size
        n = _num_outputs(self.reader)
        if output_names is None:
            if n != len(_DEFAULT_NAMES):
                raise InvalidArgumentError(
                    f"nodes.Reader: the reader has {n} outputs; give output_names "
                    f"(defaults exist only for 2 outputs: {_DEFAULT_NAMES})."
                )
            output_names = _DEFAULT_NAMES
        if len(output_names) != n:
            raise InvalidArgumentError(
                f"nodes.Reader: {len(output_names)} output_names for a reader with {n} outputs."
            )
        self.output_names = tuple(output_names)
        self._epoch: Any = None

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        """Start a new epoch (restoring a state is not supported)."""
        super().reset(initial_state)
        if initial_state is not None:
            raise NotImplementedError(
                "nodes.Reader cannot restore a state; use the reader's own get_state/set_state."
            )
        if self._epoch is not None:
            self._epoch.close()
        self._epoch = iter(self.reader.next_epoch(batch_size=self.batch_size))

    def next(self) -> dict[str, Any]:
        """The next batch as ``{name: Batch}``; ``StopIteration`` at the end of the epoch."""
        if self._epoch is None:
            raise RuntimeError("nodes.Reader: call reset() before next().")
        outputs = next(self._epoch)
        return dict(zip(self.output_names, outputs))

    def get_state(self) -> dict[str, Any]:
        """Always ``{}`` (mid-epoch state is not tracked by the node)."""
        return {}


class DictMapper(BaseNode[dict[str, Any]]):
    """Apply ``map_fn`` to the ``key`` entry of each dict from ``source`` (other keys kept)."""

    def __init__(
        self, source: BaseNode[dict[str, Any]], map_fn: Callable[[Any], Any], key: str = "data"
    ) -> None:
        super().__init__()
        self.source, self.map_fn, self.key = source, map_fn, key

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        super().reset(initial_state)
        self.source.reset(initial_state)

    def next(self) -> dict[str, Any]:
        item = dict(next(self.source))
        if self.key not in item:
            raise KeyError(f"nodes.DictMapper: no key {self.key!r} (keys: {list(item)})")
        item[self.key] = self.map_fn(item[self.key])
        return item

    def get_state(self) -> dict[str, Any]:
        return self.source.get_state()


class ToTorch(BaseNode[tuple[Any, ...]]):
    """Turn each dict into a tuple of ``torch.Tensor`` (GPU if any value is on the GPU)."""

    def __init__(self, source: BaseNode[dict[str, Any]]) -> None:
        super().__init__()
        self.source = source

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        super().reset(initial_state)
        self.source.reset(initial_state)

    def next(self) -> tuple[Any, ...]:
        item = next(self.source)
        tensors = [v.torch() if hasattr(v, "torch") else v for v in item.values()]
        gpu = next((t.device for t in tensors if t.device.type == "cuda"), None)
        if gpu is not None:
            tensors = [t.to(gpu) for t in tensors]
        return tuple(tensors)

    def get_state(self) -> dict[str, Any]:
        return self.source.get_state()


__all__ = ["DictMapper", "Reader", "ToTorch"]
