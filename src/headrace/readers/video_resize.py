"""``readers.VideoResize``: ``readers.Video`` whose frame sequences are resized as they are read.

Examples
--------
>>> from headrace.readers import VideoResize
>>> sorted(RESIZE_ARGS)[:3]
['antialias', 'interp_type', 'mag_filter']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.tensor import Tensor
from headrace.ops.geometry import resize
from headrace.readers.video import Video

#: The arguments that go to ``resize`` (the rest go to ``readers.Video``).
RESIZE_ARGS = frozenset(
    {
        "antialias",
        "interp_type",
        "mag_filter",
        "max_size",
        "min_filter",
        "minibatch_size",
        "mode",
        "resize_longer",
        "resize_shorter",
        "resize_x",
        "resize_y",
        "resize_z",
        "roi_end",
        "roi_relative",
        "roi_start",
        "size",
        "subpixel_scale",
        "temp_buffer_hint",
    }
)


class VideoResize(Video):
    """Read sequences of frames like ``readers.Video`` and resize every frame like ``resize``.

    The frames are decoded on the host (PyAV) and resized on the output device: on
    ``device="gpu"`` they are uploaded, then resized by the GPU kernels. Other outputs (labels,
    frame numbers, timestamps) are those of ``readers.Video``.

    Parameters
    ----------
    size, resize_x, resize_y, resize_z, resize_shorter, resize_longer, max_size, mode
        The output size, as ``resize`` (give it one way).
    interp_type, min_filter, mag_filter, antialias, roi_start, roi_end, roi_relative,
    subpixel_scale, minibatch_size, temp_buffer_hint
        As ``resize``.
    **kwargs
        Every argument of ``readers.Video`` (``filenames``, ``sequence_length``, ``step``,
        ``dtype`` ...) and the common reader arguments.

    Examples
    --------
    >>> import pathlib, tempfile, numpy as np
    >>> import headrace as ndd
    >>> from headrace.sample_data import write_video
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_video(d / "a.mkv", [np.full((16, 32, 3), 10 * k, np.uint8) for k in range(6)])
    >>> r = ndd.readers.VideoResize(filenames=[d / "a.mkv"], sequence_length=3,
    ...                             resize_x=16, resize_y=8)
    >>> [(v.shape, np.asarray(v)[:, 0, 0, 0].tolist()) for (v,) in r.next_epoch()]
    [((3, 8, 16, 3), [0, 10, 20]), ((3, 8, 16, 3), [30, 40, 50])]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        antialias: bool | None = None,
        interp_type: Any = None,
        mag_filter: Any = None,
        max_size: Any = None,
        min_filter: Any = None,
        minibatch_size: int | None = None,
        mode: str | None = None,
        resize_longer: Any = None,
        resize_shorter: Any = None,
        resize_x: Any = None,
        resize_y: Any = None,
        resize_z: Any = None,
        roi_end: Any = None,
        roi_relative: bool | None = None,
        roi_start: Any = None,
        size: Any = None,
        subpixel_scale: bool | None = None,
        temp_buffer_hint: int | None = None,
        **kwargs: Any,
    ) -> None:
        given = {k: v for k, v in locals().items() if k in RESIZE_ARGS and v is not None}
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        self._resize_args = given
        # the resize arguments are checked now, on a small blank sequence
        blank = np.zeros((1, 8, 8, 3), np.uint8)
        resize(Tensor(blank, layout="FHWC"), **given).evaluate()

    def _wrap(self, samples: Any, sources: Sequence[str | None], batch: bool) -> tuple[Any, ...]:
        out = super()._wrap(samples, sources, batch)
        video: Tensor | Batch = resize(out[0], **self._resize_args)
        return (video, *out[1:])


__all__ = ["RESIZE_ARGS", "VideoResize"]
