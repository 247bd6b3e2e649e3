import threading
import time

import numpy as np
import pytest

import headrace as ndd


def _data(n=6):
    return [np.full((3, 4), i, np.float32) for i in range(n)]


def _body(b, rng):
    x = ndd.cast(b, dtype=ndd.uint8)
    m = ndd.random.coin_flip(batch_size=4, rng=rng)
    y = ndd.random.uniform(batch_size=4, range=[0, 10], rng=rng)
    z = ndd.transpose(x, perm=[1, 0])
    return (
        [np.asarray(t).copy() for t in z],
        [t.item() for t in m],
        [t.item() for t in y],
    )


def _eager(data, seed):
    src = ndd.ExternalSource(iter(data))
    rng = ndd.random.RNG(seed=seed)
    out = []
    while True:
        try:
            b = src(batch_size=4)
        except StopIteration:
            return out
        out.append(_body(b, rng))


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert all(np.array_equal(p, q) for p, q in zip(x[0], y[0]))
        assert x[1] == y[1] and x[2] == y[2]


def test_external_source_capture_equals_eager_with_random_ops():
    src = ndd.ExternalSource(iter(_data()))
    rng = ndd.random.RNG(seed=5)
    cap = [_body(b, rng) for b in src.captured(batch_size=4)]
    _same(cap, _eager(_data(), 5))


def test_later_steps_use_the_pipeline():
    src = ndd.ExternalSource(iter(_data(5)))
    seen = []
    for b in src.captured(batch_size=4):
        x = ndd.cast(b, dtype=ndd.uint8)
        loop = src._capture_loop
        seen.append((loop.tracing, loop.step is not None and x is loop.step.results[0]))
    assert seen[0] == (True, False)
    assert all(s == (False, True) for s in seen[1:])
    assert not any(t.name == "headrace-capture" for t in threading.enumerate())


def test_pipeline_prefetches_ahead_of_the_body():
    calls = []

    def gen():
        for i in range(8):
            calls.append(time.monotonic())
            yield np.full((2,), i, np.float32)

    src = ndd.ExternalSource(gen)
    it = src.captured(batch_size=2)
    for i, b in enumerate(it):
        ndd.cast(b, dtype=ndd.int32)
        if i == 1:
            time.sleep(0.3)
            assert len(calls) >= 2 + 2  # steps 2 and 3 were pulled while the body slept
            break
    it.close()  # a generator bound to a name is closed explicitly (or when collected)
    assert not any(t.name == "headrace-capture" for t in threading.enumerate())


def test_fallback_when_arguments_change():
    src = ndd.ExternalSource(iter(_data(4)))
    outs = []
    for i, b in enumerate(src.captured(batch_size=4)):
        dt = ndd.capture.invariant(ndd.uint8 if i != 2 else ndd.int32)  # recorded, then differs
        outs.append(ndd.cast(b, dtype=dt).dtype)
    assert outs == [ndd.uint8, ndd.uint8, ndd.int32, ndd.uint8]


def test_nothing_captured_warns_and_continues():
    src = ndd.ExternalSource(iter(_data(3)))
    with pytest.warns(UserWarning, match="no operators were captured"):
        n = sum(1 for _ in src.captured(batch_size=4))
    assert n == 3


def test_rules():
    src = ndd.ExternalSource(iter(_data(3)))
    with pytest.raises(RuntimeError, match="Cannot change batch size to 8"):
        for b in src.captured(batch_size=4):
            ndd.random.coin_flip(batch_size=8 + 0 * b.batch_size)
    with pytest.raises(ValueError, match="non-None batch_size"):
        ndd.ExternalSource(iter(_data())).captured()
    eager = ndd.ExternalSource(iter(_data()))
    eager()
    with pytest.raises(RuntimeError, match="used eagerly"):
        eager.captured(batch_size=4)
    drv = ndd.ExternalSource(iter(_data()))
    with pytest.raises(RuntimeError, match=r"used through \.captured\(\)"):
        for _ in drv.captured(batch_size=4):
            drv()


def test_one_loop_per_thread():
    a = ndd.ExternalSource(iter(_data()))
    b = ndd.ExternalSource(iter(_data()))
    with pytest.raises(RuntimeError, match="Only one capture-mode loop"):
        for x in a.captured(batch_size=4):
            ndd.cast(x, dtype=ndd.uint8)
            for _ in b.captured(batch_size=4):
                pass


def test_device_change_raises():
    src = ndd.ExternalSource(iter(_data()))
    with pytest.raises(RuntimeError, match="Cannot change device"):
        for i, b in enumerate(src.captured(batch_size=4)):
            ndd.cast(b, dtype=ndd.uint8, device="gpu" if i else "cpu")


def test_rng_misuse_raises():
    src = ndd.ExternalSource(iter(_data()))
    rng = ndd.random.RNG(seed=1)
    with pytest.raises(RuntimeError, match="RNG of a captured operator"):
        for i, _b in enumerate(src.captured(batch_size=4)):
            ndd.random.coin_flip(batch_size=4, rng=rng)
            if i == 1:
                ndd.random.uniform(rng=rng)


def test_feeders():
    drv = ndd.ExternalSource(iter(_data(4)))
    feed = ndd.ExternalSource(iter([np.full((2,), i, np.int32) for i in range(4)]))
    got = []
    for b in drv.captured(batch_size=4):
        ndd.cast(b, dtype=ndd.uint8)
        f = feed()
        assert ndd.capture.is_captured(f)  # a feeder's items come from the graph
        got.append(int(np.asarray(ndd.cast(f, dtype=ndd.int64).tensors[0])[0]))
    assert got == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match=r"already used in a capture-mode loop|different"):
        feed()
    late = ndd.ExternalSource(iter([np.zeros(2, np.int32)] * 5))
    with pytest.raises(RuntimeError, match="during tracing"):
        for i, b in enumerate(ndd.ExternalSource(iter(_data(4))).captured(batch_size=4)):
            ndd.cast(b, dtype=ndd.uint8)
            if i > 0:
                late()
    skip = ndd.ExternalSource(iter([np.zeros(2, np.int32)] * 5))
    with pytest.raises(RuntimeError, match="not consumed"):
        for i, b in enumerate(ndd.ExternalSource(iter(_data(4))).captured(batch_size=4)):
            ndd.cast(b, dtype=ndd.uint8)
            if i == 0:
                skip()
    short = ndd.ExternalSource(iter([np.zeros(2, np.int32)] * 2))
    with pytest.raises(RuntimeError, match="exhausted"):
        for b in ndd.ExternalSource(iter(_data(5))).captured(batch_size=4):
            ndd.cast(b, dtype=ndd.uint8)
            short()


def test_break_leaves_external_source_usable_and_no_threads():
    def gen():
        yield from _data(20)

    src = ndd.ExternalSource(gen)
    for i, b in enumerate(src.captured(batch_size=4)):
        ndd.cast(b, dtype=ndd.uint8)
        if i == 2:
            break
    assert not any(t.name == "headrace-capture" for t in threading.enumerate())
    n = sum(1 for b in src.captured(batch_size=4) if ndd.cast(b, dtype=ndd.uint8) is not None)
    assert n >= 1


def test_invariant():
    x = ndd.capture.invariant(2)
    assert x + ndd.capture.invariant(3) == 5 and isinstance(x, int)
    assert ndd.capture.invariant(x) is x
    arr = ndd.capture.invariant(np.arange(3))
    assert np.asarray(arr).tolist() == [0, 1, 2]
    src = ndd.ExternalSource(iter(_data(3)))
    dt = ndd.capture.invariant(ndd.uint8)
    assert all(ndd.cast(b, dtype=dt).dtype is ndd.uint8 for b in src.captured(batch_size=4))


@pytest.fixture
def image_dir(tmp_path):
    import cv2

    for c in range(2):
        (tmp_path / f"c{c}").mkdir()
        for i in range(7):
            img = np.random.default_rng(i + 10 * c).integers(0, 255, (30 + i, 40, 3), np.uint8)
            cv2.imwrite(str(tmp_path / f"c{c}" / f"{i}.jpg"), img)
    return str(tmp_path)


def _reader_run(d, capture, epochs=2):
    r = ndd.readers.File(file_root=d, random_shuffle=True, seed=3)
    rng = ndd.random.RNG(seed=1)
    out = []
    for _ in range(epochs):
        for jpegs, labels in r.next_epoch(batch_size=4, capture=capture):
            imgs = ndd.decoders.image_random_crop(jpegs, rng=rng)
            imgs = ndd.resize(imgs, size=[16, 16])
            m = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
            x = ndd.crop_mirror_normalize(imgs, mirror=m, mean=[128.0] * 3, std=[50.0] * 3)
            out.append((x.torch().cpu().numpy().copy(), labels.torch().cpu().numpy().copy()))
    return out, r


def test_reader_capture_equals_eager_across_epochs(image_dir):
    eager, _ = _reader_run(image_dir, False)
    cap, r = _reader_run(image_dir, True)
    assert len(eager) == len(cap) == 8  # 14 samples: 4 batches per epoch, last one partial
    for (a, la), (b, lb) in zip(eager, cap):
        assert np.array_equal(a, b) and np.array_equal(la, lb)
    names = [n.schema.name for n in r._capture.nodes]
    assert names == ["decoders.image_random_crop", "resize", "random.coin_flip",
                     "crop_mirror_normalize"]  # fmt: skip
    assert r._capture.fell_back == 0
    assert not any(t.name == "headrace-capture" for t in threading.enumerate())


def test_reader_mode_rules(image_dir):
    r = ndd.readers.File(file_root=image_dir)
    for _ in r.next_epoch(batch_size=4):
        pass
    with pytest.raises(RuntimeError, match="cannot switch to capture mode"):
        r.next_epoch(batch_size=4, capture=True)
    c = ndd.readers.File(file_root=image_dir)
    for j, _ in c.next_epoch(batch_size=4, capture=True):
        ndd.decoders.image(j)
    with pytest.raises(RuntimeError, match="cannot switch to eager mode"):
        c.next_epoch(batch_size=4)
    with pytest.raises(ValueError, match="Cannot change batch_size from 4 to 8"):
        c.next_epoch(batch_size=8, capture=True)
    with pytest.raises(ValueError, match="requires a non-None batch_size"):
        ndd.readers.File(file_root=image_dir).next_epoch(capture=True)
    ck = ndd.readers.File(file_root=image_dir, enable_checkpointing=True)
    with pytest.raises(NotImplementedError):
        ck.next_epoch(batch_size=4, capture=True)
    with pytest.raises(NotImplementedError):
        ndd.checkpoint.Checkpoint().register(c, "captured")


def test_break_with_captured_rng_disables_reader(image_dir):
    r = ndd.readers.File(file_root=image_dir)
    rng = ndd.random.RNG(seed=0)
    for i, (j, _) in enumerate(r.next_epoch(batch_size=4, capture=True)):
        ndd.decoders.image_random_crop(j, rng=rng)
        if i == 1:
            break
    with pytest.raises(RuntimeError, match="invalid state"):
        r.next_epoch(batch_size=4, capture=True)
    plain = ndd.readers.File(file_root=image_dir)
    for i, (j, _) in enumerate(plain.next_epoch(batch_size=4, capture=True)):
        ndd.decoders.image(j)
        if i == 1:
            break
    assert sum(1 for _ in plain.next_epoch(batch_size=4, capture=True)) == 4


def test_dropping_an_invariant_marker_raises():
    src = ndd.ExternalSource(iter(_data(4)))
    with pytest.raises(RuntimeError, match="invariant"):
        for i, b in enumerate(src.captured(batch_size=4)):
            dt = ndd.capture.invariant(ndd.uint8) if i == 0 else ndd.uint8
            ndd.cast(b, dtype=dt)


def test_reader_left_during_tracing_stays_in_capture_mode(image_dir):
    r = ndd.readers.File(file_root=image_dir)
    for j, _ in r.next_epoch(batch_size=4, capture=True):
        ndd.decoders.image(j)
        break  # left while tracing
    with pytest.raises(RuntimeError, match="cannot switch to eager mode"):
        r.next_epoch(batch_size=4)
    with pytest.raises(ValueError, match="Cannot change batch_size from 4 to 8"):
        r.next_epoch(batch_size=8, capture=True)
    steps = [ndd.capture.is_captured(ndd.decoders.image(j))
             for j, _ in r.next_epoch(batch_size=4, capture=True)]  # fmt: skip
    assert len(steps) == 4 and all(steps)  # traced again, then replayed
    empty = ndd.readers.File(file_root=image_dir)
    with pytest.warns(UserWarning, match="no operators were captured"):
        for j, _ in empty.next_epoch(batch_size=4, capture=True):
            j.evaluate()
    assert sum(1 for _ in empty.next_epoch(batch_size=4)) == 4  # nothing captured: free again
    drew = ndd.readers.File(file_root=image_dir)
    for _ in drew.next_epoch(batch_size=4, capture=True):
        ndd.random.uniform(batch_size=4, rng=ndd.random.RNG(seed=1))
        break  # left while tracing a step that drew random numbers: free again
    assert sum(1 for _ in drew.next_epoch(batch_size=4)) == 4


def test_older_spelling_compile_uses_its_own_words(image_dir):
    r = ndd.readers.File(file_root=image_dir)
    for _ in r.next_epoch(batch_size=4):
        break
    with pytest.raises(RuntimeError, match="cannot switch to compiled mode"):
        r.next_epoch(batch_size=4, compile=True)
    c = ndd.readers.File(file_root=image_dir)
    for j, _ in c.next_epoch(batch_size=4, compile=True):
        ndd.resize(ndd.decoders.image(j), size=[8, 8])
    with pytest.raises(RuntimeError, match="cannot switch to non-compiled mode"):
        c.next_epoch(batch_size=4)
    with pytest.raises(RuntimeError, match="Cannot change batch_size to 8"):
        for j, _ in c.next_epoch(batch_size=4, compile=True):
            ndd.resize(ndd.decoders.image(j), size=[8, 8], batch_size=8)
    with pytest.raises(ValueError, match="compile=True requires a non-None batch_size"):
        ndd.readers.File(file_root=image_dir).next_epoch(compile=True)
    d = ndd.readers.File(file_root=image_dir)
    with pytest.raises(RuntimeError, match="Cannot change batch size to 8"):
        for j, _ in d.next_epoch(batch_size=4, capture=True):
            ndd.resize(ndd.decoders.image(j), size=[8, 8], batch_size=8)


def test_invariant_marker_semantics():
    from headrace.compile._invariant import is_invariant, unwrap_invariant, unwrap_invariants

    inv = ndd.compile.invariant
    marked = inv(1)
    assert unwrap_invariant(marked) == 1 and is_invariant(marked)
    assert unwrap_invariants({marked: marked}) == {1: 1}
    assert all(not is_invariant(k) for k in unwrap_invariants({marked: 2}))  # keys too
    value = inv(object())
    assert inv(lambda x: x)(value) is value  # calls get their arguments as given

    class Box:
        item = None

    box = Box()
    replacement = inv([1])
    inv(box).item = replacement  # stored as given
    assert box.item is replacement
    # an argument whose wrapped value is None means "not given", as a plain None
    img = ndd.as_batch([np.zeros((4, 4, 3), np.uint8)] * 2, layout="HWC")
    out = ndd.rotate(img, angle=inv(0.0), fill_value=inv(None))
    assert np.array_equal(ndd.as_tensor(out), ndd.as_tensor(img))


def test_repeated_random_call_site_counts_as_captured_while_traced():
    src = ndd.ExternalSource(iter(_data(3)))
    rng = ndd.random.RNG(seed=5)
    flags = []
    with pytest.warns(UserWarning, match="runs more than once per iteration"):
        for b in src.captured(batch_size=4):
            ndd.cast(b, dtype=ndd.uint8)
            first, again = [ndd.random.uniform(batch_size=4, rng=rng) for _ in range(2)]
            flags.append((ndd.capture.is_captured(first), ndd.capture.is_captured(again)))
    assert flags == [(True, True), (True, False), (True, False)]


def test_the_pipeline_thread_computes_on_the_body_s_device() -> None:
    """The steps computed ahead run on the device current in the loop body, not on the default
    a new thread would start with (here a GPU: the suite fakes one), e.g. feeders read there."""
    seen: list[tuple[str, str]] = []

    def feed() -> ndd.Batch:
        seen.append((threading.current_thread().name, ndd.Device.current().device_type))
        return ndd.batch([np.zeros(2, np.float32)] * 4)

    data = [ndd.batch([np.full(3, i, np.float32)] * 4) for i in range(5)]
    driver, feeder = ndd.ExternalSource(source=iter(data)), ndd.ExternalSource(source=feed)
    assert ndd.Device.current().device_type == "gpu"  # the default outside
    with ndd.Device("cpu"):
        for x in driver.captured(4):
            ndd.cat(x, feeder(), axis=0).evaluate()
    assert [d for _, d in seen] == ["cpu"] * 5
    assert {t for t, _ in seen[1:]} == {"headrace-capture"}  # computed ahead, in the pipeline
