"""Counter-based random generator (:class:`RNG`) and the thread-local default.

An ``RNG`` is a 64-bit key (the seed) plus a position in the key's stream of 32-bit words. The
stream is numpy's Philox-4x64-10 keyed by the seed, read as little-endian 32-bit words. Every
random operator call takes exactly 7 words from its RNG and derives all its values from them, so
results never depend on thread timing, and a checkpoint only needs ``(seed, position)``.
We match the reference's distributions, not its bits.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, InvalidTypeError

STATE_VERSION = 1
_MASK64 = (1 << 64) - 1
_BUF_BLOCKS = 128  # Philox blocks (4 uint64 = 8 words each) generated at a time
RNG_MISUSE = (
    "The RNG of a captured operator was used unexpectedly: the number of random draws per "
    "iteration changed or the RNG was modified outside the loop"
)
"""Raised (as RuntimeError) by capture mode when an RNG leaves the schedule traced for it."""

_observer = threading.local()


def set_draw_observer(fn: Any) -> None:
    """Call ``fn(rng)`` before every draw (or advance) of any RNG in this thread; None stops.

    Capture mode uses it while tracing, to learn where each generator's draws of a step begin.
    """
    _observer.fn = fn


class RNGState(dict):  # type: ignore[type-arg]
    """The plain, JSON-able state of an :class:`RNG`; ``str()`` gives compact JSON."""

    def __str__(self) -> str:
        return json.dumps(self, separators=(",", ":"), sort_keys=True)

    __repr__ = __str__


def _parse_state(value: Any) -> tuple[int, int]:
    if isinstance(value, RNG):
        return value._seed, value._pos
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("ascii")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise InvalidArgumentError(f"RNG: invalid state string ({e}).") from None
    if not isinstance(value, dict):
        raise InvalidTypeError(
            f"RNG: a state must be an RNGState, a dict or its string (got {type(value).__name__})."
        )
    kind = value.get("kind", "RNG")
    if kind != "RNG":
        raise InvalidArgumentError(
            f"RNG: the state is not a random generator's (its kind is {kind!r}); restore it into "
            "the object it was saved from."
        )
    if value.get("version") != STATE_VERSION:
        raise InvalidArgumentError(
            f"RNG: unsupported state version {value.get('version')!r} "
            f"(this headrace writes version {STATE_VERSION})."
        )
    seed, pos = value.get("seed"), value.get("position")
    for name, v, hi in (("seed", seed, _MASK64), ("position", pos, None)):
        if type(v) is not int or v < 0 or (hi is not None and v > hi):
            top = "2**64" if hi is not None else "infinity"
            raise InvalidArgumentError(
                f"RNG: a state needs an integer {name!r} in [0, {top}) (got {v!r})."
            )
    return seed, pos  # type: ignore[return-value]


class RNG:
    """A seeded, counter-based random number generator.

    Parameters
    ----------
    seed : int, optional
        64-bit seed (truncated to 64 bits). Without seed or state, a random seed is used.
    state : RNGState, dict or str, optional
        A state from :meth:`get_state` to continue from. Exclusive with ``seed``.

    Examples
    --------
    >>> a, b = RNG(seed=42), RNG(seed=42)
    >>> a() == b()
    True
    >>> c = a.clone(); a() == c()
    True
    """

    __slots__ = ("_buf", "_buf_start", "_lock", "_pos", "_seed", "_version")

    def __init__(self, seed: int | None = None, state: Any = None) -> None:
        if seed is not None and state is not None:
            raise InvalidArgumentError("RNG: pass either seed or state, not both.")
        self._lock = threading.Lock()
        self._version = 0  # bumped by every re-seed / set_state (capture mode checks it)
        if state is not None:
            self._seed, self._pos = _parse_state(state)
        else:
            if seed is None:
                seed = int.from_bytes(os.urandom(8), "little")
            self._seed = _check_seed(seed)
            self._pos = 0
        self._buf: np.ndarray | None = None
        self._buf_start = 0

    # --- drawing --------------------------------------------------------------------------
    def _fill(self, pos: int) -> None:
        block = pos // 8
        bg = np.random.Philox(key=self._seed)
        if block:
            bg.advance(block)
        raw = bg.random_raw(_BUF_BLOCKS * 4)
        self._buf = np.asarray(raw, dtype=np.uint64).view(np.uint32)
        self._buf_start = block * 8

    def draw(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words (a uint32 array)."""
        obs = getattr(_observer, "fn", None)
        if obs is not None:
            obs(self)
        with self._lock:
            pos = self._pos
            buf = self._buf
            off = pos - self._buf_start
            if buf is None or off < 0 or off + n > buf.shape[0]:
                if n > _BUF_BLOCKS * 8 - 8:
                    bg = np.random.Philox(key=self._seed)
                    bg.advance(pos // 8)
                    raw = np.asarray(bg.random_raw((pos % 8 + n + 7) // 8 * 4 + 4), np.uint64)
                    self._pos = pos + n
                    return raw.view(np.uint32)[pos % 8 : pos % 8 + n].copy()
                self._fill(pos)
                buf = self._buf
                off = pos - self._buf_start
            self._pos = pos + n
            return buf[off : off + n].copy()  # type: ignore[index]

    def __call__(self) -> int:
        """The next 32-bit word as a Python int."""
        return int(self.draw(1)[0])

    def advance(self, n: int) -> None:
        """Skip ``n`` words."""
        if n < 0:
            raise InvalidArgumentError(f"RNG.advance: n must not be negative (got {n}).")
        obs = getattr(_observer, "fn", None)
        if obs is not None and n:
            obs(self)
        with self._lock:
            self._pos += int(n)

    # --- seed and state ------------------------------------------------------------------
    @property
    def seed(self) -> int:
        """The seed (truncated to 64 bits); assigning re-seeds and restarts the sequence.

        The reference's newest revision makes it write-only; reading it is its older spelling,
        kept so that programs written against either run.
        """
        return self._seed

    @seed.setter
    def seed(self, value: int) -> None:
        with self._lock:
            self._seed = _check_seed(value)
            self._pos = 0
            self._buf = None
            self._version += 1

    def clone(self) -> RNG:
        """A new generator continuing from this one's current state."""
        return RNG(state=self.get_state())

    def get_state(self, *, cuda_stream: Any = None) -> RNGState:
        """The state: ``{"version", "kind", "seed", "position"}`` (JSON-able)."""
        return RNGState(version=STATE_VERSION, kind="RNG", seed=self._seed, position=self._pos)

    def set_state(self, value: Any) -> None:
        """Continue from a state returned by :meth:`get_state` (or its string)."""
        seed, pos = _parse_state(value)
        with self._lock:
            self._seed, self._pos = seed, pos
            self._buf = None
            self._version += 1

    @property
    def state(self) -> RNGState:
        """The current state (assignable)."""
        return self.get_state()

    @state.setter
    def state(self, value: Any) -> None:
        self.set_state(value)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch-style alias of :meth:`get_state`."""
        return dict(self.get_state())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """PyTorch-style alias of :meth:`set_state`."""
        self.set_state(state)

    def __repr__(self) -> str:
        return f"RNG(state='{self.get_state()}')"


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidTypeError(f"RNG: the seed must be an int (got {type(seed).__name__}).")
    return int(seed) & _MASK64


_local = threading.local()


def get_default_rng() -> RNG:
    """This thread's default generator (created with a random seed on first use).

    Examples
    --------
    >>> get_default_rng() is get_default_rng()
    True
    """
    r = getattr(_local, "rng", None)
    if r is None:
        r = _local.rng = RNG()
    return r


def set_seed(seed: int) -> None:
    """Re-seed this thread's default generator.

    Examples
    --------
    >>> set_seed(7); a = get_default_rng()()
    >>> set_seed(7); a == get_default_rng()()
    True
    """
    get_default_rng().seed = seed


def resolve_rng(rng: Any) -> RNG:
    """``rng`` if given (it must be an RNG), else the thread-local default."""
    if rng is None:
        return get_default_rng()
    if not isinstance(rng, RNG):
        raise InvalidArgumentError(
            f"rng must be an instance of headrace.random.RNG (got {type(rng).__name__})."
        )
    return rng


_gen_local = threading.local()


def _philox_key_counter(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Philox key and starting counter (words 2 and 3 zero) of one call's 7 words."""
    w0, w1, w2, w3, w4, w5, w6 = words.tolist()
    key = np.array([w0 | (w1 << 32), w2 | (w3 << 32)], dtype=np.uint64)
    return key, np.array([w4 | (w5 << 32), w6, 0, 0], dtype=np.uint64)


def uniform_substreams(words: np.ndarray) -> Callable[[int, int, tuple[int, ...]], np.ndarray]:
    """``draw(stream, part, shape)``: uniform ``[0, 1)`` doubles from one of the call's
    independent sub-streams (Philox counter words 2 and 3). What a sub-stream gives depends on
    the call's 7 words and ``(stream, part)`` only, never on what other sub-streams drew, so a
    sample's draws need not depend on the batch's other samples. ``stream`` 0 with ``part`` 0
    is :func:`call_generator`'s stream.

    Examples
    --------
    >>> words = np.arange(7, dtype=np.uint32)
    >>> draw = uniform_substreams(words)
    >>> a = draw(3, 0, (2,))
    >>> _ = draw(1, 0, (5,))
    >>> bool((draw(3, 0, (2,)) == a).all())
    True
    """
    key, counter = _philox_key_counter(words)
    bg = np.random.Philox(key=key)
    gen = np.random.Generator(bg)
    st = bg.state

    def draw(stream: int, part: int, shape: tuple[int, ...]) -> np.ndarray:
        counter[2], counter[3] = stream, part
        st["state"]["counter"] = counter
        st["buffer_pos"] = 4
        st["has_uint32"] = 0
        bg.state = st
        return gen.random(shape)

    return draw


def call_generator(words: np.ndarray) -> np.random.Generator:
    """A numpy Generator fully determined by one call's 7 words (reused per thread)."""
    g = getattr(_gen_local, "gen", None)
    if g is None:
        bg = np.random.Philox(key=0)
        g = _gen_local.gen = (bg, np.random.Generator(bg), bg.state)
    bg, gen, st = g
    inner = st["state"]
    inner["key"], inner["counter"] = _philox_key_counter(words)
    st["buffer_pos"] = 4
    st["has_uint32"] = 0
    bg.state = st
    return gen
