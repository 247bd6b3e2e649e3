"""``readers.NemoAsr``: speech samples (audio, sampling rate, transcript, index) listed in NeMo
JSON manifests.

Examples
--------
>>> import json, pathlib, tempfile, numpy as np, soundfile as sf
>>> from headrace.readers import NemoAsr
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> sf.write(d / "a.wav", np.zeros(160, np.float32), 16000)
>>> _ = (d / "m.json").write_text(json.dumps({"audio_filepath": "a.wav", "text": "hi"}) + "\\n")
>>> [(a.shape, float(r), bytes(np.asarray(t)))
...  for a, r, t in NemoAsr(manifest_filepaths=[d / "m.json"]).next_epoch()]
[((160,), 16000.0, b'hi')]
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.errors import DecodeError, InvalidArgumentError, MissingArgumentError
from headrace._dispatch.deprecated_args import warn_given
from headrace.backends.cpu.decoders import decode_audio
from headrace.backends.shared.common import resampling_lobes
from headrace.readers._base import Reader
from headrace.readers._outputs import shuffle_seed
from headrace.readers._preshuffle import preshuffled
from headrace.readers.file import FileReadError, MissingFileError

_OP = "readers.NemoAsr"


class ManifestError(InvalidArgumentError):
    """A manifest line is not a JSON object with an ``audio_filepath``."""


_Entry = tuple[str, str, "tuple[float, float | None] | None", int]


def read_manifests(paths: Sequence[Any], min_duration: float, max_duration: float) -> list[_Entry]:
    """``(audio path, text, span, index)`` of every manifest entry whose ``duration`` is within
    the limits; ``span`` is ``(offset, duration)`` in seconds when the entry gives either (the
    part of the file read), else ``None``; ``index`` counts the entries kept from the same
    manifest (the reference's ``read_idxs`` output: it starts again at 0 in each manifest).

    A relative audio path is taken from the working directory, as the reference does, when a
    file is there, else from its manifest's folder (where NeMo's tools write it relative to);
    a missing ``text`` is empty;
    a limit of 0 or less is no limit, and entries without ``duration`` always pass.
    """
    entries: list[_Entry] = []
    for m in paths:
        kept = 0
        mpath = os.fspath(m)
        base = os.path.dirname(os.path.abspath(mpath))
        try:
            with open(mpath, encoding="utf-8") as f:
                lines = f.readlines()
        except OSError as e:
            raise MissingFileError(
                e.errno or errno.ENOENT, f"{_OP}: cannot read the manifest", mpath
            ) from e
        for k, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                audio = entry["audio_filepath"]
                if not isinstance(entry, dict) or not isinstance(audio, str):
                    raise TypeError("audio_filepath must be a string")
            except (ValueError, KeyError, TypeError) as e:
                raise ManifestError(
                    f"{_OP}: {mpath}:{k}: not a manifest entry (a JSON object with an "
                    f"audio_filepath): {e}"
                ) from None
            dur = entry.get("duration")
            if dur is not None:
                d = float(dur)
                if (min_duration > 0 and d < min_duration) or (
                    max_duration > 0 and d > max_duration
                ):
                    continue
            text = entry.get("text", "")
            offset = entry.get("offset")
            span = None
            if offset is not None or dur is not None:
                span = (float(offset or 0.0), None if dur is None else float(dur))
            entries.append((_audio_path(base, audio), str(text), span, kept))
            kept += 1
    return entries


def _audio_path(manifest_dir: str, audio: str) -> str:
    """An entry's audio file: relative paths from the working directory when a file is there
    (the reference's rule), else from the manifest's folder."""
    if os.path.isabs(audio) or os.path.exists(audio):
        return os.path.abspath(audio)  # (absolute: a later chdir or a worker reads the same)
    return os.path.join(manifest_dir, audio)


class _NemoDataset:
    """Manifest entries; ``read(i)`` decodes entry ``i`` and adds the outputs asked for."""

    read_errors = (OSError, DecodeError)

    def __init__(
        self,
        entries: list[_Entry],
        decode: dict[str, Any],
        outputs: tuple[bool, ...],
    ) -> None:
        self.entries = entries
        self.decode = decode
        self.rate, self.text, self.idx = outputs

    def __len__(self) -> int:
        return len(self.entries)

    def source(self, index: int) -> str:
        return self.entries[index][0]

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        path, text, span, idx = self.entries[index]
        try:
            data = np.fromfile(path, np.uint8)
        except OSError as e:
            code = e.errno or errno.EIO
            cls = MissingFileError if code == errno.ENOENT else FileReadError
            raise cls(code, f"{_OP}: cannot read sample {index} ({e.strerror or e})", path) from e
        try:
            audio, _, rate = decode_audio(data, self.decode, self.decode["sample_rate"], span)
        except Exception as e:  # soundfile.LibsndfileError, RuntimeError: unreadable data
            raise DecodeError(
                f"{_OP}: sample {index} ({path!r}): cannot decode the audio file ({e})."
            ) from e
        out: list[np.ndarray] = [audio]
        if self.rate:
            out.append(np.array(rate, np.float32))
        if self.text:
            out.append(np.frombuffer(text.encode("utf-8"), np.uint8).copy())
        if self.idx:
            out.append(np.array([idx], np.int64))
        return tuple(out)


class NemoAsr(Reader):
    """Read speech samples listed in NeMo manifests: audio, and optionally its sampling rate, its
    transcript and its index.

    A manifest has one JSON object a line: ``audio_filepath`` (required; a relative path is
    read from the working directory when a file is there, as the reference, else from the
    manifest's folder), ``offset`` and ``duration`` in seconds and ``text``
    (empty when missing). As in the reference, ``offset`` and ``duration`` cut the audio:
    ``floor(duration * rate)`` samples from sample ``floor(offset * rate)`` of the file (to its
    end without ``duration``), before any resampling.

    Parameters
    ----------
    max_batch_size, name, num_inputs
        As every reader.
    device : {"cpu"}
    manifest_filepaths : list of path
        The manifests, read in order (required).
    min_duration, max_duration : float
        Leave out entries whose ``duration`` is below / above (0, the default: no limit;
        float32 as the reference's, so a duration equal to 0.1 is below ``min_duration=0.1``).
    sample_rate : float
        Resample to this rate (default -1: each file's own), as ``decoders.audio``.
    quality : float
        Resampling quality 0-100 (default 50).
    downmix : bool
        Average the channels into a 1-D signal (default True); otherwise ``(time, channels)``.
    dtype : DType
        float32 (default), int16 or int32.
    read_sample_rate : bool
        Output each file's sampling rate (float32 scalar; default True). As in the reference
        it is the file's own rate, also when ``sample_rate`` resamples the audio.
    read_text : bool
        Output the transcript as UTF-8 bytes (1-D uint8; default True).
    read_idxs : bool
        Output the entry's index among the entries kept from its manifest (int64, shape (1,);
        default False; it starts at 0 in each manifest, as the reference).
    normalize_text : bool
        Accepted; no effect (deprecated in the reference).
    dont_use_mmap
        Accepted; files are read with plain file I/O.
    shuffle_after_epoch, shuffle_after_epoch_seed
        Shuffle the whole dataset every epoch (seeded; the same on every rank).
    **kwargs
        Common reader arguments (``shard_id``, ``num_shards``, ``random_shuffle``, ``seed``,
        ``pad_last_batch``, ``last_batch`` (default ``"fill"``), ``on_error`` ...).

    Raises
    ------
    ManifestError
        (an :class:`~headrace.InvalidArgumentError`) a manifest line is not an entry.
    DecodeError
        An audio file cannot be decoded; the message names the sample and its file.

    Examples
    --------
    >>> import json, pathlib, tempfile, numpy as np, soundfile as sf
    >>> import headrace as ndd
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for i, n in enumerate((800, 1600, 3200)):
    ...     sf.write(d / f"{i}.wav", np.zeros((n, 2), np.float32), 16000)
    >>> lines = [json.dumps({"audio_filepath": f"{i}.wav", "duration": n / 16000, "text": "t"})
    ...          for i, n in enumerate((800, 1600, 3200))]
    >>> _ = (d / "m.json").write_text("\\n".join(lines))
    >>> r = ndd.readers.NemoAsr(manifest_filepaths=[d / "m.json"], max_duration=0.15,
    ...                         sample_rate=8000, read_text=False, read_idxs=True)
    >>> [(a.shape, float(rate), int(i[0])) for a, rate, i in r.next_epoch()]
    [((400,), 16000.0, 0), ((800,), 16000.0, 1)]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        manifest_filepaths: Any = None,
        sample_rate: float | None = None,
        quality: float | None = None,
        downmix: bool | None = None,
        dtype: Any = None,
        min_duration: float | None = None,
        max_duration: float | None = None,
        read_sample_rate: bool | None = None,
        read_text: bool | None = None,
        read_idxs: bool | None = None,
        normalize_text: bool | None = None,
        dont_use_mmap: bool | None = None,
        shuffle_after_epoch: bool | None = None,
        shuffle_after_epoch_seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        warn_given("readers.NemoAsr", {"normalize_text": normalize_text})
        shuffle_seed(kwargs, shuffle_after_epoch, shuffle_after_epoch_seed)
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)  # (CPU only)
        if shuffle_after_epoch and (self._random_shuffle or self._stick_to_shard):
            raise InvalidArgumentError(
                f"{_OP}: shuffle_after_epoch cannot be combined with random_shuffle or "
                "stick_to_shard."
            )
        self._global_shuffle = bool(shuffle_after_epoch)
        if manifest_filepaths is None:
            raise MissingArgumentError(f"{_OP}: manifest_filepaths is required.")
        manifests = (
            [manifest_filepaths]
            if isinstance(manifest_filepaths, (str, os.PathLike))
            else list(manifest_filepaths)
        )
        if not manifests:
            raise InvalidArgumentError(f"{_OP}: manifest_filepaths lists no manifest.")
        dt = _dt.dtype(dtype) if dtype is not None else _dt.float32
        if dt not in (_dt.int16, _dt.int32, _dt.float32):
            raise InvalidArgumentError(f"{_OP}: dtype must be int16, int32 or float32, got {dt}.")
        q = 50.0 if quality is None else float(quality)
        if not 0.0 <= q <= 100.0:
            raise InvalidArgumentError(f"{_OP}: quality must be in [0, 100], got {q:g}.")
        rate = -1.0 if sample_rate is None else float(np.float32(sample_rate))
        lo = float(np.float32(min_duration or 0.0))
        hi = float(np.float32(max_duration or 0.0))
        outputs = (
            True if read_sample_rate is None else bool(read_sample_rate),
            True if read_text is None else bool(read_text),
            bool(read_idxs),
        )
        decode = {
            "dtype": dt,
            "downmix": True if downmix is None else bool(downmix),
            "lobes": resampling_lobes(q),
            "sample_rate": rate,
        }
        entries = read_manifests(manifests, lo, hi)
        self._outputs = ((dt, None),) + tuple(
            t
            for t, on in zip(((_dt.float32, None), (_dt.uint8, None), (_dt.int64, None)), outputs)
            if on
        )
        entries = preshuffled(entries, self._random_shuffle)  # (before sharding, as the reference)
        self._dataset = _NemoDataset(entries, decode, outputs)
        self._finish_init()


__all__ = ["ManifestError", "NemoAsr", "read_manifests"]
