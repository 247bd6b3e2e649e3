"""Per-frame arguments: an operator run on every frame of its sequences, each frame with its own
argument values (``ndd.per_frame``).

An argument given as a ``Tensor``/``Batch`` whose layout starts with ``F`` (what
``ndd.per_frame`` marks) holds one value per frame of the corresponding input sequence (the
input's layout starts with ``F`` too): its outermost extent is the sequence's number of
frames, or 1 for one value for every frame. The call then runs once on the batch of all frames
(sequence inputs split into frames, other inputs and per-sample arguments repeated for each
frame, per-frame arguments taken frame by frame) and every output is stacked back into
sequences (layout ``F`` + the frame output's layout). The frames of one sequence must give
outputs of one shape.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> video = ndd.tensor(np.zeros((3, 4, 4, 1), np.uint8), layout="FHWC")
>>> out = ndd.brightness(video, brightness_shift=ndd.per_frame(np.float32([0, 0.5, 1])))
>>> np.asarray(out)[:, 0, 0, 0].tolist(), out.layout
([0, 128, 255], 'FHWC')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._core.tensor import Tensor
from headrace._dispatch.args import ArgDict, PerSample
from headrace._dispatch.kernel_context import KernelContext

Kernel = Callable[[KernelContext, list[Any], ArgDict], tuple[Batch, ...]]


def marked(v: Tensor | Batch) -> bool:
    """Whether an argument value is per-frame (its layout starts with ``F``)."""
    lay = v.layout
    return bool(lay) and lay[0] == "F"  # type: ignore[index]


class PerFrameArguments(Exception):
    """Raised where per-frame arguments meet code that takes per-sample values only (a chain
    of calls: it gives up and the call runs on its own, frame by frame)."""


def _raw(v: Tensor | Batch, n: int) -> list[np.ndarray]:
    """The argument's value for each of the ``n`` samples, on the host, unconverted."""
    vals = v._resolved() if isinstance(v, Batch) else [v._resolved_data()] * n
    return [np.asarray(x) for x in _st.samples_to_host(vals, v._dtype)]


def _frames(b: Batch, counts: list[int]) -> list[Any]:
    """Every frame of every sequence of ``b``, in order."""
    out: list[Any] = []
    for s, f in zip(b._samples, counts):  # type: ignore[arg-type]
        out.extend(s[k] for k in range(f))
    return out


def _expanded(b: Batch, counts: list[int], reps: list[int]) -> Batch:
    """Input ``b`` for the batch of frames: its frames when it is a sequence input with the
    same numbers of frames, else each sample repeated for its sequence's frames."""
    lay = b._layout or ""
    samples = b._samples
    assert samples is not None
    if lay.startswith("F") and [int(s.shape[0]) for s in samples] == counts:
        return Batch._wrap(_frames(b, counts), b._dtype, lay[1:] or None, b._device)
    return Batch._wrap([samples[i] for i in reps], b._dtype, b._layout, b._device)


def _frame_values(b: Batch, counts: list[int], name: str, what: str) -> Batch:
    """A per-frame input for the batch of frames: frame ``j`` of each sample (its frame 0 for
    every frame when it holds one)."""
    samples = b._samples
    assert samples is not None
    out: list[Any] = []
    for i, (s, f) in enumerate(zip(samples, counts)):
        m = int(s.shape[0]) if s.ndim else 0
        if m not in (1, f):
            raise InvalidArgumentError(
                f"{name}: per-frame input {what!r} of sample {i} has {m} frames; the input "
                f"sequence has {f} (give one value per frame, or one for all)."
            )
        out.extend(s[j if m > 1 else 0] for j in range(f))
    return Batch._wrap(out, b._dtype, (b._layout or "F")[1:] or None, b._device)


def _repeated_as_frames(b: Batch, frames: Batch | None) -> Batch:
    """Each sample of ``b`` as a sequence of as many (identical) frames as the per-frame input
    ``frames`` gives its sample."""
    assert b._samples is not None and frames is not None and frames._samples is not None
    seqs = []
    for s, f in zip(b._samples, frames._samples):
        n = int(f.shape[0]) if f.ndim else 1
        if _st.is_torch(s):
            seqs.append(s.unsqueeze(0).expand(n, *s.shape))
        else:
            seqs.append(np.broadcast_to(s, (n, *s.shape)))
    return Batch._wrap(seqs, b._dtype, "F" + (b._layout or ""), b._device)


def _stack(frames: Sequence[Any], name: str, i: int, like: Any) -> Any:
    """One sequence from its frames' outputs (all of one shape)."""
    if not frames:
        return like[None][:0] if like is not None else np.zeros((0,), np.uint8)  # 0 frames
    shapes = {tuple(f.shape) for f in frames}
    if len(shapes) > 1:
        raise ShapeError(
            f"{name}: the frames of sample {i} give outputs of different shapes "
            f"({sorted(shapes)[:3]}); a sequence needs one frame shape (give an output size)."
        )
    if _st.is_torch(frames[0]):
        import torch

        return torch.stack(list(frames))
    return np.stack(frames)


def run(
    kern: Kernel,
    kc: KernelContext,
    batches: list[Batch | None],
    vals: ArgDict,
    per_frame: dict[str, Tensor | Batch],
    convert: dict[str, Callable[[Any], Any]],
    frame_inputs: dict[int, str] | None = None,
    adjust: Callable[[ArgDict, list[int], list[tuple[int, ...]], str | None], None] | None = None,
) -> tuple[Batch, ...]:
    """``kern`` on the frames of the sequences of ``batches[0]`` with ``per_frame`` arguments
    (``vals`` holds the other arguments, resolved) and per-frame inputs (``frame_inputs``: the
    positions of the marked inputs in ``batches``, with their names); ``adjust``: the schema's
    ``per_frame_vals``; the outputs as sequences."""
    frame_inputs = frame_inputs or {}
    name = kc.name
    seq = batches[0] if batches else None
    if seq is not None and not (seq._layout or "").startswith("F") and frame_inputs:
        # a sample given per-frame inputs is one image for every frame (as the reference does)
        seq = batches[0] = _repeated_as_frames(seq, batches[next(iter(frame_inputs))])
    if seq is None or not (seq._layout or "").startswith("F"):
        what = (
            f"argument {next(iter(per_frame))!r}"
            if per_frame
            else f"input {next(iter(frame_inputs.values()))!r}"
        )
        raise InvalidArgumentError(
            f"{name}: {what} is per-frame (ndd.per_frame), but the input is not a "
            f"sequence (layout {None if seq is None else seq._layout!r}; expected one starting "
            "with 'F')."
        )
    n = kc.n
    counts = [int(s.shape[0]) for s in seq._samples]  # type: ignore[union-attr]
    reps = np.repeat(np.arange(n), counts).tolist()
    ins = [
        None
        if b is None
        else _frame_values(b, counts, name, frame_inputs[j])
        if j in frame_inputs
        else _expanded(b, counts, reps)
        for j, b in enumerate(batches)
    ]
    fvals = ArgDict({k: PerSample(v[i] for i in reps) if type(v) is PerSample else v
                     for k, v in vals.items()})  # fmt: skip
    for k, v in per_frame.items():
        per: list[Any] = []
        for i, (raw, f) in enumerate(zip(_raw(v, n), counts)):
            m = raw.shape[0] if raw.ndim else 0
            if m not in (1, f):
                raise InvalidArgumentError(
                    f"{name}: per-frame argument {k!r} of sample {i} has {m} frames; the "
                    f"input sequence has {f} (give one value per frame, or one for all)."
                )
            try:
                per.extend(convert[k](raw[j if m > 1 else 0]) for j in range(f))
            except (TypeError, ValueError) as e:
                raise type(e)(f"{name}: invalid value for argument {k!r} ({e}).") from None
        fvals[k] = PerSample(per)
    fvals.per_sample = True
    if adjust is not None and ins and ins[0] is not None:
        frames_in = ins[0]
        adjust(fvals, counts, [tuple(f.shape) for f in frames_in._samples], frames_in._layout)  # type: ignore[union-attr]
    fkc = KernelContext(name, kc.ctx, kc.device, len(reps), kc.rng_words, kc.module, kc.stream)
    # an error names the frame's sequence and frame (its "sample" is the frame's position)
    srcs = kc.sources
    fkc.sources = [
        f"{srcs[i] if srcs is not None and srcs[i] else f'sequence {i}'} frame {f}"
        for i, count in enumerate(counts)
        for f in range(count)
    ]
    outs = kern(fkc, ins, fvals)
    result = []
    for out in outs:
        samples = out._samples
        assert samples is not None
        like = samples[0] if samples else None
        seqs, at = [], 0
        for i, f in enumerate(counts):
            seqs.append(_stack(samples[at : at + f], name, i, like))
            at += f
        lay = None if out._layout is None else "F" + out._layout
        res = Batch._wrap(seqs, out._dtype, lay, out._device)
        res._sources = seq._sources
        result.append(res)
    return tuple(result)


__all__ = ["PerFrameArguments", "marked", "run"]
