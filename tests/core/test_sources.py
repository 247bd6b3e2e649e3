"""SampleSources: a batch's sample sources, named on access only."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from headrace._core.sources import SampleSources
from headrace.readers import File


def test_names_on_access_only() -> None:
    calls: list[int] = []

    def name(i: int) -> str:
        calls.append(i)
        return f"s{i}"

    s = SampleSources(name, [5, 2, 9])
    assert calls == [] and len(s) == 3
    assert s[1] == "s2" and s[-1] == "s9" and calls == [2, 9]
    tail = s[1:]
    assert isinstance(tail, SampleSources) and list(tail) == ["s2", "s9"]
    assert s == ["s5", "s2", "s9"] and s != ["s5"] and s != "s5s2s9"
    assert repr(s) == "['s5', 's2', 's9']"
    with pytest.raises(IndexError):
        s[3]
    with pytest.raises(TypeError):
        hash(s)
    assert pickle.loads(pickle.dumps(s)) == ["s5", "s2", "s9"]  # the names, not the namer


@pytest.mark.parametrize("last_batch", ["pad", "partial", "fill"])
def test_reader_batches_name_their_samples(tmp_path, last_batch: str) -> None:
    files = []
    for k in range(7):
        p = tmp_path / f"f{k}.bin"
        p.write_bytes(bytes([k]) * (k + 1))
        files.append(str(p))
    r = File(files=files, random_shuffle=True, seed=3)
    seen = 0
    for data, _ in r.next_epoch(batch_size=3, last_batch=last_batch):
        assert len(data._sources) == data.batch_size == 3 or last_batch == "partial"
        for t, src, t2 in zip(data, data._sources, data.tensors):
            assert np.asarray(t).tobytes() == open(src, "rb").read()
            assert t2._source == src
        seen += data.batch_size
    assert seen == (7 if last_batch == "partial" else 9)
