"""The :class:`Checkpoint` aggregator (see :mod:`headrace.checkpoint`).

It lives in the execution layer because each :class:`~headrace.EvalContext` owns one
(``ctx.checkpoint``); it depends on nothing but the error types.
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import socket
import string
import time
from typing import Any, NamedTuple

from headrace._core.errors import InvalidArgumentError, InvalidTypeError

FORMAT_VERSION = 2
_ANON = "__op_"


class _Entry(NamedTuple):
    """One key's state and the qualified type name of the object it belongs to (or None)."""

    state: Any
    type_name: str | None = None


# --- file name patterns ------------------------------------------------------------------------
class _Pattern(NamedTuple):
    """A checkpoint file name pattern: ``prefix + format(seq, spec) + suffix``."""

    prefix: str
    spec: str
    suffix: str

    def path(self, seq: int) -> str:
        return self.prefix + format(seq, self.spec) + self.suffix

    def stale_temporaries(self) -> list[str]:
        """Temporary files of saves to this pattern that were interrupted (killed writers).

        A temporary file is named ``.<file name>.<host>.<pid>.<random>.tmp`` next to the file
        it becomes. It is stale when its writer, on this host, is no longer running, or, for a
        writer on another host (a shared file system), when it is over an hour old.
        """
        final = glob.escape(self.prefix) + "*" + glob.escape(self.suffix)
        head, tail = os.path.split(final)
        regex = re.compile(re.escape(self.prefix) + r"[0-9]+" + re.escape(self.suffix))
        host = _HOST
        stale = []
        for path in glob.glob(os.path.join(head, "." + tail + ".*.tmp")):
            directory, base = os.path.split(path)
            for form in _TMP_FORMS:  # with the host, then the older form without it
                m = form.fullmatch(base)
                if m is not None and regex.fullmatch(os.path.join(directory, m["name"])):
                    break
            else:
                continue
            if m.groupdict().get("host") in (None, host):
                pid = int(m["pid"])
                if pid == os.getpid() or _pid_alive(pid):
                    continue
            else:
                try:
                    if time.time() - os.path.getmtime(path) < 3600:
                        continue
                except OSError:
                    continue
            stale.append(path)
        return stale

    def existing(self) -> list[tuple[int, str]]:
        """``(seq, path)`` of the files on disk that match, lowest ``seq`` first."""
        regex = re.compile(re.escape(self.prefix) + r"([0-9]+)" + re.escape(self.suffix))
        found = []
        for path in glob.glob(glob.escape(self.prefix) + "*" + glob.escape(self.suffix)):
            m = regex.fullmatch(path)
            if m is not None and os.path.isfile(path):
                found.append((int(m.group(1)), path))
        return sorted(found)


def _parse_pattern(pattern: Any) -> _Pattern:
    """Split a pattern with exactly one ``{seq}`` field (an integer format spec is allowed)."""
    if isinstance(pattern, os.PathLike):
        pattern = os.fspath(pattern)
    if not isinstance(pattern, str):
        raise InvalidTypeError(
            "A checkpoint file pattern must be a str with one `{seq}` field "
            f"(got {type(pattern).__name__})."
        )
    parts: list[str] = [""]
    spec: str | None = None
    try:
        fields = list(string.Formatter().parse(pattern))
    except ValueError as e:
        raise InvalidArgumentError(
            f"Invalid checkpoint file pattern {pattern!r} ({e}); it needs one `{{seq}}` field."
        ) from None
    for literal, field, fmt, conversion in fields:
        parts[-1] += literal
        if field is None:
            continue
        if field != "seq" or conversion is not None:
            raise InvalidArgumentError(
                f"Checkpoint file pattern {pattern!r}: only the `{{seq}}` field is allowed "
                f"(got {{{field}{'!' + conversion if conversion else ''}}})."
            )
        if spec is not None:
            raise InvalidArgumentError(
                f"Checkpoint file pattern {pattern!r}: `{{seq}}` may appear only once."
            )
        spec = fmt or ""
        parts.append("")
    if spec is None:
        raise InvalidArgumentError(
            f"Checkpoint file pattern {pattern!r} has no `{{seq}}` field "
            "(e.g. 'ckpt_{seq:04d}.json')."
        )
    for probe in (7, 1234567):
        try:
            ok = format(probe, spec).isdigit() and int(format(probe, spec)) == probe
        except (ValueError, TypeError):
            ok = False
        if not ok:
            raise InvalidArgumentError(
                f"Checkpoint file pattern {pattern!r}: the format spec {spec!r} of `{{seq}}` must "
                "write plain decimal digits (e.g. '{seq}' or '{seq:04d}')."
            )
    return _Pattern(parts[0], spec, parts[1])


_HOST = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname()) or "host"


_TMP_FORMS = (
    re.compile(r"\.(?P<name>.+)\.(?P<host>[A-Za-z0-9_-]+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp"),
    re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp"),
)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, owned by someone else
        return True
    return True


def _remove_stale_temporaries(pat: _Pattern) -> None:
    """Delete what interrupted saves to ``pat`` left behind (see ``stale_temporaries``)."""
    for path in pat.stale_temporaries():
        try:
            os.unlink(path)
        except OSError:  # another process removed it first, or a read-only directory
            pass


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse
        pass
    finally:
        os.close(fd)


def _write_new(path: str, data: str) -> bool:
    """Write ``data`` to ``path`` atomically unless ``path`` exists (then return False).

    The data goes to a hidden temporary file in the same directory, is flushed to disk, and
    only then appears under ``path``: a crash leaves either no file or a complete one.
    """
    directory = os.path.dirname(path) or "."
    tmp = os.path.join(
        directory, f".{os.path.basename(path)}.{_HOST}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    )
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # atomic and never replaces an existing file
        except FileExistsError:
            return False
        except OSError:  # file systems without hard links
            if os.path.exists(path):
                return False
            os.replace(tmp, path)
        _fsync_dir(directory)
        return True
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


# --- states ------------------------------------------------------------------------------------
def _type_name(op_type: Any) -> str | None:
    if op_type is None or isinstance(op_type, str):
        return op_type
    if isinstance(op_type, type):
        return op_type.__qualname__
    raise InvalidTypeError(f"`op_type` must be a class or a qualified class name, got {op_type!r}.")


def _state_text(state: Any) -> str:
    """The string stored in a payload: ``str(state)``, or compact JSON for a plain dict."""
    if isinstance(state, (bytes, bytearray)):
        return bytes(state).decode("ascii")
    if type(state) is dict:
        return json.dumps(state, separators=(",", ":"), sort_keys=True)
    return str(state)


def _parse_entry(key: str, value: Any) -> _Entry:
    if not isinstance(value, dict) or "state" not in value:
        raise InvalidArgumentError(
            f"Invalid checkpoint entry for {key!r}: expected an object with a `state` field "
            f"(got {json.dumps(value)[:80]})."
        )
    type_name = value.get("type")
    if type_name is not None and not isinstance(type_name, str):
        raise InvalidArgumentError(
            f"Invalid `type` for checkpoint entry {key!r}: expected a string or null "
            f"(got {type_name!r})."
        )
    state = value["state"]
    if isinstance(state, dict):
        state = _state_text(state)
    elif not isinstance(state, str):
        raise InvalidArgumentError(
            f"Invalid checkpoint entry for {key!r}: `state` must be a string or an object "
            f"(got {type(state).__name__})."
        )
    return _Entry(state, type_name)


def _parse_payload(data: Any) -> dict[str, _Entry]:
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode("utf-8")
    if not isinstance(data, str):
        raise InvalidTypeError(
            f"deserialize expects the str made by serialize() (got {type(data).__name__})."
        )
    try:
        payload = json.loads(data)
    except json.JSONDecodeError as e:
        raise InvalidArgumentError(f"Invalid checkpoint payload: not JSON ({e}).") from None
    if not isinstance(payload, dict) or "states" not in payload:
        raise InvalidArgumentError("Invalid checkpoint payload.")
    version = payload.get("version")
    if version != FORMAT_VERSION:
        raise InvalidArgumentError(
            f"Unsupported checkpoint format version {version!r}; this headrace reads version "
            f"{FORMAT_VERSION} only."
        )
    states = payload["states"]
    if not isinstance(states, dict):
        raise InvalidArgumentError("Invalid checkpoint payload: `states` must be an object.")
    return {str(k): _parse_entry(str(k), v) for k, v in states.items()}


# --- the aggregator ----------------------------------------------------------------------------
class Checkpoint:
    """The states of registered readers and random generators, for exact resume.

    Register objects with :meth:`register`, snapshot them with :meth:`collect`, persist with
    :meth:`save` / :meth:`serialize`. To resume, :meth:`load` / :meth:`deserialize` into a
    checkpoint and :meth:`register` fresh objects under the same keys: each saved state is
    applied when its object is registered (or by :meth:`restore`). Not thread-safe: use one
    per thread.

    Examples
    --------
    >>> import headrace as ndd
    >>> ckpt = ndd.checkpoint.Checkpoint()
    >>> ckpt.register(ndd.random.RNG(seed=1)), ckpt.register(ndd.random.RNG(seed=2), "aug")
    ('__op_0', 'aug')
    >>> ckpt.names, len(ckpt), "aug" in ckpt
    (('__op_0', 'aug'), 2, True)
    >>> ckpt.collect(); ckpt.is_complete, ckpt.get_state("aug")["position"]
    (True, 0)
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._ops: dict[str, Any] = {}
        self._keys: dict[int, str] = {}  # id(op) -> key
        self._states: dict[str, _Entry] = {}
        self._dirty: set[str] = set()  # keys whose state is not yet applied to the op
        self._complete = False
        self._loaded = False
        self._origin: str | None = None  # the file the states were loaded from
        self._next_seq: dict[_Pattern, int] = {}

    # --- introspection ---------------------------------------------------------------------
    @property
    def is_complete(self) -> bool:
        """True after :meth:`collect` (until the next load)."""
        return self._complete

    @property
    def is_loaded(self) -> bool:
        """True after :meth:`load` or :meth:`deserialize` (until the next collect)."""
        return self._loaded

    @property
    def names(self) -> tuple[str, ...]:
        """The keys of the registered objects, in registration order."""
        return tuple(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def __contains__(self, name: object) -> bool:
        return str(name) in self._ops

    def __repr__(self) -> str:
        flags = [f for f, on in (("complete", self._complete), ("loaded", self._loaded)) if on]
        return f"Checkpoint(names={self.names!r}{', ' if flags else ''}{', '.join(flags)})"

    def clear(self) -> None:
        """Forget every registered object, state and flag."""
        self._reset()

    # --- registration ----------------------------------------------------------------------
    def register(self, op: Any, name: str | None = None) -> str:
        """Add a reader or RNG under ``name`` (default: the next ``__op_<n>`` key).

        Parameters
        ----------
        op : Reader or RNG
            Any object with ``get_state`` and ``set_state``. Readers get checkpointing turned
            on (allowed until their first ``next_epoch``).
        name : str, optional
            The key. A named key may be re-bound to another object of the same type. Without a
            name, an object already registered keeps its key; otherwise it gets the next
            sequential key, so anonymous registration order must match between save and resume.

        Returns
        -------
        str
            The key. A pending (loaded or ``set_state``) state for it is applied now.

        Examples
        --------
        >>> import headrace as ndd
        >>> ckpt = ndd.checkpoint.Checkpoint()
        >>> rng = ndd.random.RNG(seed=0)
        >>> ckpt.register(rng), ckpt.register(rng)
        ('__op_0', '__op_0')
        """
        if not (
            callable(getattr(op, "get_state", None)) and callable(getattr(op, "set_state", None))
        ):
            raise InvalidTypeError(
                "Checkpoint.register: the object needs get_state() and set_state() (a reader or "
                f"an RNG), got {type(op).__name__}."
            )
        old_key = self._keys.get(id(op))
        if name is None:
            key = old_key if old_key is not None else self._new_anonymous_key()
        else:
            key = self._check_name(op, name, old_key)
        enable = getattr(op, "_enable_checkpointing", None)
        if callable(enable):
            enable()
        previous = self._ops.get(key)
        if previous is not None and previous is not op:
            del self._keys[id(previous)]
        self._ops[key] = op
        self._keys[id(op)] = key
        self._apply(key)
        return key

    def _check_open(self, what: str) -> None:
        if self._complete:
            raise RuntimeError(
                f"Cannot register a new operator ({what}) into a checkpoint completed by "
                "collect(); call clear() first."
            )

    def _new_anonymous_key(self) -> str:
        key = f"{_ANON}{len(self._ops)}"
        self._check_open(f"anonymous key {key!r}")
        if self._loaded and key not in self._states:
            raise KeyError(
                f"Loaded checkpoint has no state for the operator's key {key!r}. Anonymous keys "
                "follow registration order; if it changed since the save, register with names."
            )
        return key

    def _check_name(self, op: Any, name: Any, old_key: str | None) -> str:
        if not isinstance(name, str):
            raise InvalidTypeError(f"A checkpoint name must be a str (got {type(name).__name__}).")
        if not name:
            raise InvalidArgumentError("A checkpoint name must not be empty.")
        if name.startswith(_ANON):
            raise InvalidArgumentError(
                f"Checkpoint names must not start with {_ANON!r} (reserved for anonymous "
                f"registration; got {name!r})."
            )
        if old_key is not None and old_key != name:
            raise RuntimeError(
                f"Cannot register the operator under {name!r}: it is already registered under "
                f"{old_key!r}."
            )
        current = self._ops.get(name)
        if current is not None:
            if type(current) is not type(op):
                raise InvalidTypeError(
                    f"Cannot replace operator {name!r} of type {type(current).__qualname__!r} "
                    f"with an operator of type {type(op).__qualname__!r}."
                )
            return name
        self._check_open(repr(name))
        if self._loaded and name not in self._states:
            raise KeyError(f"The loaded checkpoint has no state for {name!r}.")
        return name

    def _apply(self, key: str) -> None:
        """Hand a pending state to its object, after checking the recorded type."""
        if key not in self._dirty:
            return
        entry = self._states[key]
        op = self._ops[key]
        actual = type(op).__qualname__
        if entry.type_name is not None and entry.type_name != actual:
            raise InvalidTypeError(
                f"Type mismatch for operator {key!r}: the checkpoint holds a state for type "
                f"{entry.type_name!r}, but the registered operator is of type {actual!r}."
            )
        try:
            op.set_state(entry.state)
        except (ValueError, TypeError) as e:
            if self._origin is None:
                raise
            raise InvalidArgumentError(
                f"Checkpoint file {self._origin!r}: the state of {key!r} was rejected ({e})."
            ) from e
        self._dirty.discard(key)

    # --- states ----------------------------------------------------------------------------
    def get_state(self, name: str) -> Any:
        """The state stored for ``name`` (None before collect/load/set_state).

        After :meth:`collect` it is the object's own state (a ``ReaderState`` / ``RNGState``);
        after a load, its string form.
        """
        key = str(name)
        if key not in self._ops:
            raise KeyError(f"No operator is registered under {key!r}.")
        entry = self._states.get(key)
        return None if entry is None else entry.state

    def set_state(self, name: str, value: Any, op_type: Any = None) -> None:
        """Store a pending state for ``name``, applied at its registration or :meth:`restore`.

        ``op_type`` (a class or its qualified name) is checked against the object's type when
        the state is applied.

        Examples
        --------
        >>> import headrace as ndd
        >>> src = ndd.random.RNG(seed=5); _ = src()
        >>> ckpt = ndd.checkpoint.Checkpoint()
        >>> ckpt.set_state("rng", src.get_state(), op_type=ndd.random.RNG)
        >>> dst = ndd.random.RNG(seed=0); _ = ckpt.register(dst, "rng")
        >>> dst() == src()
        True
        """
        key = str(name)
        type_name = _type_name(op_type)
        if self._complete and key not in self._ops:
            raise KeyError(f"No operator is registered under {key!r} in this completed checkpoint.")
        self._states[key] = _Entry(value, type_name)
        self._dirty.add(key)

    def _check_no_strays(self) -> None:
        extra = sorted(set(self._states) - set(self._ops))
        if extra:
            raise RuntimeError(
                f"The checkpoint has states with no corresponding registered ops: {extra}. "
                "Register an object under each of these keys."
            )

    def collect(self) -> None:
        """Snapshot every registered object's state (and its type name)."""
        self._check_no_strays()
        self._states = {
            key: _Entry(op.get_state(), type(op).__qualname__) for key, op in self._ops.items()
        }
        self._dirty.clear()
        self._complete, self._loaded, self._origin = True, False, None

    def restore(self) -> None:
        """Apply every pending state (a no-op without states); all registered keys need one."""
        if not self._states:
            return
        self._check_no_strays()
        missing = sorted(set(self._ops) - set(self._states))
        if missing:
            raise RuntimeError(f"The checkpoint is incomplete: no state for {missing}.")
        for key in [k for k in self._ops if k in self._dirty]:
            self._apply(key)

    # --- serialization ---------------------------------------------------------------------
    def serialize(self) -> str:
        """The states as versioned JSON text (see the module docstring)."""
        if not self._states:
            raise RuntimeError("Cannot serialize an empty checkpoint: call collect() first.")
        states = {
            key: {"state": _state_text(e.state), "type": e.type_name}
            for key, e in self._states.items()
        }
        return json.dumps({"version": FORMAT_VERSION, "states": states}, indent=1)

    def deserialize(self, data: str | bytes) -> None:
        """Replace the states with those of a :meth:`serialize` payload (all become pending).

        Invalid payloads raise ``ValueError`` and leave the checkpoint unchanged.
        """
        self._states = _parse_payload(data)
        self._dirty = set(self._states)
        self._complete, self._loaded, self._origin = False, True, None

    def save(self, pattern: str | os.PathLike[str]) -> str:
        """Write the states to a new file; return its path.

        Parameters
        ----------
        pattern : str
            A format string with one ``{seq}`` field, e.g. ``"ckpt/run_{seq:04d}.json"``. The
            first save uses one past the highest number on disk, later saves count on; an
            existing file is never overwritten. Directories are created. The file appears
            atomically (temporary file, fsync, link/rename); temporary files that interrupted
            (killed) saves to the same pattern left behind are removed first.

        Examples
        --------
        >>> import os, tempfile, headrace as ndd
        >>> ckpt = ndd.checkpoint.Checkpoint(); _ = ckpt.register(ndd.random.RNG(seed=1), "r")
        >>> ckpt.collect()
        >>> d = tempfile.mkdtemp()
        >>> [os.path.basename(ckpt.save(os.path.join(d, "c_{seq:02d}.json"))) for _ in range(2)]
        ['c_00.json', 'c_01.json']
        """
        pat = _parse_pattern(pattern)
        data = self.serialize()
        _remove_stale_temporaries(pat)
        seq = self._next_seq.get(pat)
        if seq is None:
            seq = max((s for s, _ in pat.existing()), default=-1) + 1
        while True:
            path = pat.path(seq)
            directory = os.path.dirname(path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            if _write_new(path, data):
                break
            seq += 1
        self._next_seq[pat] = seq + 1
        return path

    def load(self, pattern: str | os.PathLike[str]) -> str:
        """Read the highest-numbered file matching ``pattern`` (see :meth:`save`); return its path.

        A file that is not a valid checkpoint (truncated, edited) raises ``ValueError`` naming
        it. Registered objects get the loaded states when (re-)registered or on :meth:`restore`.
        """
        pat = _parse_pattern(pattern)
        found = pat.existing()
        if not found:
            raise FileNotFoundError(f"No checkpoint file matches the pattern {str(pattern)!r}.")
        seq, path = found[-1]
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            self.deserialize(text)
        except (ValueError, TypeError) as e:
            older = " (an older checkpoint exists; remove this file to fall back to it)"
            raise InvalidArgumentError(
                f"Checkpoint file {path!r} is not a valid checkpoint, maybe truncated or edited: "
                f"{e}{older if len(found) > 1 else ''}"
            ) from e
        self._origin = path
        self._next_seq[pat] = seq + 1
        return path


__all__ = ["FORMAT_VERSION", "Checkpoint"]
