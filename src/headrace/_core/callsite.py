"""Call-site capture and synthetic tracebacks that end at the user's line."""

from __future__ import annotations

import os
import sys
import traceback
import types
from typing import Any

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_internal_cache: dict[Any, bool] = {}
_MAX_DEPTH = 24

# Each entry: a frame with the line and the instruction it was executing when captured. The
# instruction matters: tracebacks report the line of ``tb_lasti`` (Python 3.11+), and a frame
# that is still running has moved on by the time an error is raised for it.
CallSite = tuple[tuple[types.FrameType, int, int], ...]


def _is_internal(code: types.CodeType) -> bool:
    r = _internal_cache.get(code)
    if r is None:
        fn = code.co_filename
        r = _internal_cache[code] = fn.startswith(_PKG_DIR) or fn.startswith("<frozen")
    return r


def capture(skip: int = 1) -> CallSite:
    """The user's innermost frame with its current line number (outer frames are added when an
    error needs them: they are still executing the same lines while the user's frame waits)."""
    f: types.FrameType | None = sys._getframe(skip)
    while f is not None and _is_internal(f.f_code):
        f = f.f_back
    if f is None:
        return ()
    return ((f, f.f_lineno, f.f_lasti),)


def complete(site: CallSite) -> CallSite:
    """``site`` with the outer frames of the user's call added."""
    if not site:
        return site
    out = list(site)
    f = site[-1][0].f_back
    while f is not None and len(out) < _MAX_DEPTH:
        out.append((f, f.f_lineno, f.f_lasti))
        f = f.f_back
    return tuple(out)


def make_traceback(site: CallSite) -> types.TracebackType | None:
    """A traceback running from the outermost captured frame down to the user's call line."""
    tb = None
    for frame, lineno, lasti in site:  # innermost first: build inward-pointing chain
        tb = types.TracebackType(tb, frame, max(lasti, 0), lineno)
    return tb


def describe(site: CallSite) -> str:
    """``file:line`` of the user's call."""
    if not site:
        return "<unknown>"
    frame, lineno, _ = site[0]
    return f"{frame.f_code.co_filename}:{lineno}"


def format_inner(exc: BaseException) -> str:
    """The library-internal traceback of ``exc`` as text (for a note on the cause)."""
    return "".join(traceback.format_tb(exc.__traceback__))


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that points at the user's line (call it in the
    function that warns): headrace's own frames are skipped, however many there are."""
    level, f = 1, sys._getframe(1)
    while f.f_back is not None and _is_internal(f.f_code):
        f, level = f.f_back, level + 1
    return level
