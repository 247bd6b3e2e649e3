"""Provable arguments: which argument of a traced call is a constant the source proves.

A traced operator call is recorded only when each argument that is not a batch is provably the
same on every step. The proof reads the source of the calling function: the expression written
at the argument's place must be made of

* literals, and inline tuples, lists and operator expressions of provable parts;
* attribute chains rooted at a DALI module or class (``ndd.int32``,
  ``nvidia.dali.types.DALIDataType.FLOAT``) that end at a DALI constant;
* names bound exactly once inside a function, to a provable value that is not a mutable
  literal (list, dict, set, comprehension); unpacking of inline tuples is followed;
* parameters whose value the live caller passed as a provable expression (followed through any
  number of calls), or whose default is provable; and closure variables of such bindings;
* values marked ``ndd.capture.invariant``: a call of ``invariant`` or a module global that holds
  a marked value (and attributes of it).

Module globals, names bound more than once (branches, ``+=``, ``for`` targets, ``nonlocal``
rebinding, imports), call results and attributes of user objects are not provable. Without
the source (a REPL, ``exec``) only marked values are.

The analysis of a function's file is cached by file (the parsed tree) and by code position (the
call expression at an instruction).
"""

from __future__ import annotations

import ast
import enum
import functools
import inspect
import linecache
import types
from typing import Any

from headrace import types as _hr_types
from headrace._core.device import Device
from headrace._core.dtype import DType
from headrace.capture._invariant import invariant, is_invariant

_DALI_PREFIXES = ("headrace", "nvidia.dali")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_MUTABLE = (ast.List, ast.Dict, ast.Set, *_COMPREHENSIONS)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_MAX_DEPTH = 32
"""The most proof steps (names, parameters, callers) followed for one argument."""


class _File:
    """A parsed source file: its call expressions by span and each node's parent."""

    __slots__ = ("calls", "lines", "parents")

    def __init__(self, lines: list[str], tree: ast.Module) -> None:
        self.lines = lines
        self.calls: dict[tuple[int, int, int, int], ast.Call] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            if isinstance(node, ast.Call) and node.end_lineno is not None:
                span = (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset)
                self.calls.setdefault(span, node)  # type: ignore[arg-type]


_files: dict[str, _File | None] = {}
_calls: dict[tuple[types.CodeType, int], tuple[_File, ast.Call] | None] = {}


def _file(filename: str) -> _File | None:
    """The parsed file ``filename`` (``None`` without source), re-parsed when linecache's copy
    changes."""
    lines = linecache.getlines(filename)
    if not lines:
        return None
    f = _files.get(filename)
    if f is not None and f.lines is lines:
        return f
    try:
        tree = ast.parse("".join(lines), filename=filename)
    except (SyntaxError, ValueError):
        return None
    f = _files[filename] = _File(lines, tree)
    return f


def call_at(code: types.CodeType, lasti: int) -> tuple[_File, ast.Call] | None:
    """The call expression that the instruction at ``lasti`` of ``code`` runs, with its file."""
    key = (code, lasti)
    if key in _calls:
        return _calls[key]
    found = None
    pos = next(iter(list(code.co_positions())[lasti // 2 : lasti // 2 + 1]), None)
    if pos is not None and None not in pos:
        f = _file(code.co_filename)
        node = None if f is None else f.calls.get(pos)  # type: ignore[arg-type]
        if f is not None and node is not None:
            found = (f, node)
    _calls[key] = found
    return found


class _Ctx:
    """Where an expression is evaluated: its scope node, the frame running it (if live) and
    the module globals."""

    __slots__ = ("file", "frame", "globals", "scope")

    def __init__(self, file: _File, scope: ast.AST, frame: Any, globs: dict[str, Any]) -> None:
        self.file, self.scope, self.frame, self.globals = file, scope, frame, globs

    def parent(self) -> _Ctx | None:
        """The enclosing function scope (class bodies skipped), with its frame when it is the
        caller of this one (comprehensions, live parents)."""
        node = _scope_of(self.file, self.scope)
        while isinstance(node, ast.ClassDef):
            node = _scope_of(self.file, node)
        if node is None:
            return None
        frame = None
        if self.frame is not None and self.frame.f_back is not None:
            back = self.frame.f_back
            name = getattr(node, "name", None)
            if back.f_code.co_name == name or isinstance(node, _COMPREHENSIONS):
                frame = back
        return _Ctx(self.file, node, frame, self.globals)


def _scope_of(file: _File, node: ast.AST) -> ast.AST | None:
    """The innermost scope (function, lambda, class, comprehension, module) holding ``node``."""
    p = file.parents.get(node)
    while p is not None and not isinstance(p, (*_SCOPES, *_COMPREHENSIONS)):
        p = file.parents.get(p)
    return p


def unprovable_args(frame: types.FrameType | None, names: list[str]) -> str | None:
    """The first of the keyword arguments ``names`` of the call that ``frame`` is making which
    the source does not prove constant; ``None`` when all are provable.

    Parameters
    ----------
    frame
        The innermost user frame, executing the operator call.
    names
        The argument names to check (not those that are batches or values marked
        ``invariant``: these need no proof). Without source none is provable.
    """
    if not names:
        return None
    found = None if frame is None else call_at(frame.f_code, frame.f_lasti)
    if found is None or frame is None:
        return names[0]
    file, call = found
    ctx = _Ctx(file, _scope_of(file, call) or call, frame, frame.f_globals)
    kw = {k.arg: k.value for k in call.keywords if k.arg is not None}
    splat = any(k.arg is None for k in call.keywords)
    for n in names:
        expr = kw.get(n)
        if expr is None:
            if splat:
                return n
            continue  # filled in by headrace itself (a default or a positional argument)
        if not _provable(expr, ctx, 0):
            return n
    return None


def _provable(e: ast.AST, ctx: _Ctx, depth: int) -> bool:
    """Whether expression ``e`` in ``ctx`` is provably the same value on every step."""
    if depth > _MAX_DEPTH:
        return False
    d = depth + 1
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.UnaryOp):
        return _provable(e.operand, ctx, d)
    if isinstance(e, ast.BinOp):
        return _provable(e.left, ctx, d) and _provable(e.right, ctx, d)
    if isinstance(e, ast.BoolOp):
        return all(_provable(v, ctx, d) for v in e.values)
    if isinstance(e, ast.Compare):
        return _provable(e.left, ctx, d) and all(_provable(c, ctx, d) for c in e.comparators)
    if isinstance(e, (ast.Tuple, ast.List)):
        return all(_provable(x, ctx, d) for x in e.elts)
    if isinstance(e, ast.Starred):
        return _provable(e.value, ctx, d) and _immutable_expr(e.value, ctx, d)
    if isinstance(e, ast.NamedExpr):
        return _provable(e.value, ctx, d)
    if isinstance(e, ast.Name):
        return _name(e.id, ctx, d)
    if isinstance(e, ast.Attribute):
        return _attribute(e, ctx)
    if isinstance(e, ast.Call):
        return _resolve(e.func, ctx) is invariant
    return False


def _immutable_expr(e: ast.AST, ctx: _Ctx, depth: int) -> bool:
    """Whether ``e`` (already provable) does not evaluate to a mutable container (a provable
    name is bound to an immutable value)."""
    return not isinstance(e, _MUTABLE)


# --- names ------------------------------------------------------------------------------------
def _params(scope: ast.AST) -> list[ast.arg]:
    a = scope.args  # type: ignore[attr-defined]
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _name(name: str, ctx: _Ctx, depth: int) -> bool:
    scope = ctx.scope
    if isinstance(scope, _COMPREHENSIONS):
        targets = {
            n.id for g in scope.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
        }
        if name in targets:
            return False
        parent = ctx.parent()
        return parent is not None and _name(name, parent, depth + 1)
    if isinstance(scope, _FUNCTIONS):
        a = scope.args
        if name in {x.arg for x in (a.vararg, a.kwarg) if x is not None}:
            return False
        bindings = _bindings(scope, name)
        if bindings is None:
            return False
        is_param = any(p.arg == name for p in _params(scope))
        if is_param:
            return not bindings and _parameter(name, ctx, depth)
        if bindings:
            if len(bindings) != 1:
                return False
            value = bindings[0]
            return (
                value is not None
                and _provable(value, ctx, depth + 1)
                and _immutable_expr(value, ctx, depth)
            )
        parent = ctx.parent()  # a closure variable, or a global
        if parent is not None and not isinstance(parent.scope, ast.Module):
            return _free(name, ctx, parent, depth)
    return _global(name, ctx)


def _free(name: str, ctx: _Ctx, parent: _Ctx, depth: int) -> bool:
    """A free variable of ``ctx``'s function, bound in ``parent`` (or further out)."""
    scope = parent.scope
    if isinstance(scope, _FUNCTIONS) and parent.frame is None:
        is_param = any(p.arg == name for p in _params(scope))
        bindings = _bindings(scope, name)
        if is_param and bindings == [] and ctx.frame is not None:  # a finished parent: the cell
            return _constant_value(ctx.frame.f_locals.get(name, []))
    return _name(name, parent, depth + 1)


def _global(name: str, ctx: _Ctx) -> bool:
    """A module global (or builtin) counts only when it holds a marked value."""
    return is_invariant(ctx.globals.get(name))


class _Unbound:
    pass


def _bindings(scope: ast.AST, name: str) -> list[ast.AST | None] | None:
    """The values ``name`` is bound to in function ``scope`` (``None`` where a binding has no
    provable value); ``None`` when it is rebound in a way that is never provable."""
    out: list[ast.AST | None] = []
    body = scope.body if isinstance(scope.body, list) else [scope.body]  # type: ignore[attr-defined]
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            if getattr(node, "name", None) == name:
                return None
            if any(isinstance(n, ast.Nonlocal) and name in n.names for n in ast.walk(node)):
                return None
            continue
        if isinstance(node, _COMPREHENSIONS):
            continue
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if _binds(t, name):
                    out.append(_unpack(t, node.value, name))
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None and _binds(node.target, name):
                out.append(node.value)
        elif isinstance(node, ast.NamedExpr):
            if node.target.id == name:
                out.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.Delete)):
            targets = node.targets if isinstance(node, ast.Delete) else [node.target]
            if any(_binds(t, name) for t in targets):
                return None
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if any(
                i.optional_vars is not None and _binds(i.optional_vars, name) for i in node.items
            ):
                return None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return None
        elif isinstance(node, ast.ExceptHandler):
            if node.name == name:
                return None
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            if node.name == name:
                return None
        elif isinstance(node, ast.MatchMapping):
            if node.rest == name:
                return None
        stack.extend(ast.iter_child_nodes(node))
    return out


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def _unpack(target: ast.AST, value: ast.AST | None, name: str) -> ast.AST | None:
    """The part of ``value`` that assignment target ``target`` binds to ``name`` (``None``
    when that is not known from the source)."""
    if value is None:
        return None
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if isinstance(target, ast.Starred):
        return None  # a star target is a fresh list
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(
        value, (ast.Tuple, ast.List)
    ):
        return None
    if any(isinstance(v, ast.Starred) for v in value.elts):
        return None
    elts = target.elts
    star = next((i for i, t in enumerate(elts) if isinstance(t, ast.Starred)), None)
    if star is None:
        if len(elts) != len(value.elts):
            return None
        pairs = list(zip(elts, value.elts))
    else:
        after = len(elts) - star - 1
        if len(value.elts) < len(elts) - 1:
            return None
        pairs = list(zip(elts[:star], value.elts[:star]))
        pairs += list(zip(elts[star + 1 :], value.elts[len(value.elts) - after :]))
    for t, v in pairs:
        if _binds(t, name):
            return _unpack(t, v, name)
    return None


# --- parameters -------------------------------------------------------------------------------
def _parameter(name: str, ctx: _Ctx, depth: int) -> bool:
    """A parameter never rebound: provable when the caller passed a provable expression for
    it, or left its provable default."""
    scope = ctx.scope
    frame = ctx.frame
    if frame is None:
        return False
    caller = frame.f_back
    if caller is None:
        return False
    found = call_at(caller.f_code, caller.f_lasti)
    if found is None:
        return False
    cfile, call = found
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    callee = _callee(call.func, caller, frame.f_code)
    if callee is None:
        return False
    shift, partial = callee
    positional = [*scope.args.posonlyargs, *scope.args.args]  # type: ignore[attr-defined]
    index = next((i for i, p in enumerate(positional) if p.arg == name), None)
    caller_ctx = _Ctx(cfile, _scope_of(cfile, call) or call, caller, caller.f_globals)
    p_args: tuple[Any, ...] = partial.args if partial is not None else ()
    p_kw: dict[str, Any] = partial.keywords if partial is not None else {}
    if index is not None:
        if index < shift:
            return False
        j = index - shift
        if j < len(p_args):
            return _constant_value(p_args[j])
        j -= len(p_args)
        if j < len(call.args):
            e = call.args[j]
            return _provable(e, caller_ctx, depth + 1) and _immutable_expr(e, caller_ctx, depth)
    posonly = {p.arg for p in scope.args.posonlyargs}  # type: ignore[attr-defined]
    for k in call.keywords:
        if k.arg is None:
            return False
        if k.arg == name and name not in posonly:
            e = k.value
            return _provable(e, caller_ctx, depth + 1) and _immutable_expr(e, caller_ctx, depth)
    if name in p_kw:
        return _constant_value(p_kw[name])
    default = _default(scope, name)
    if default is None:
        return False
    outer = _Ctx(ctx.file, _scope_of(ctx.file, scope) or scope, None, ctx.globals)
    if caller.f_code.co_name == getattr(outer.scope, "name", None):
        outer.frame = caller
    return _provable(default, outer, depth + 1) and _immutable_expr(default, outer, depth)


def _default(scope: ast.AST, name: str) -> ast.AST | None:
    a = scope.args  # type: ignore[attr-defined]
    positional = [*a.posonlyargs, *a.args]
    offset = len(positional) - len(a.defaults)
    for i, p in enumerate(positional):
        if p.arg == name:
            return a.defaults[i - offset] if i >= offset else None
    for p, dflt in zip(a.kwonlyargs, a.kw_defaults):
        if p.arg == name:
            return dflt
    return None


def _callee(
    func: ast.AST, caller: types.FrameType, code: types.CodeType
) -> tuple[int, functools.partial[Any] | None] | None:
    """How the call expression ``func`` reaches the function of ``code``: the number of
    positional parameters it binds itself (``self``/``cls``) and the ``functools.partial``
    in between; ``None`` when it is not recognised (a wrapper, an instance with ``__call__``,
    a call result)."""
    if isinstance(func, ast.Name):
        obj = _lookup(func.id, caller)
        if isinstance(obj, functools.partial):
            return (0, obj) if getattr(obj.func, "__code__", None) is code else None
        return (0, None) if getattr(obj, "__code__", None) is code else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        base = _lookup(func.value.id, caller)
        if base is _MISSING:
            return None
        try:
            raw = inspect.getattr_static(base, func.attr)
        except AttributeError:
            return None
        if isinstance(raw, staticmethod):
            return (0, None) if getattr(raw.__func__, "__code__", None) is code else None
        if isinstance(raw, classmethod):
            return (1, None) if getattr(raw.__func__, "__code__", None) is code else None
        if isinstance(raw, types.FunctionType) and raw.__code__ is code:
            if isinstance(base, type):
                return (0, None)
            if isinstance(base, types.ModuleType):
                return (0, None)
            return (1, None)
    return None


_MISSING: Any = _Unbound()


def _lookup(name: str, frame: types.FrameType) -> Any:
    loc = frame.f_locals
    if name in loc:
        return loc[name]
    if name in frame.f_globals:
        return frame.f_globals[name]
    return getattr(frame.f_builtins, "get", lambda *_: _MISSING)(name, _MISSING)


# --- attributes and runtime values -------------------------------------------------------------
def _resolve(e: ast.AST, ctx: _Ctx) -> Any:
    """The value of an attribute chain rooted at a module global that is a DALI module or
    class (``_MISSING`` otherwise); a root holding a marked value resolves to itself."""
    chain: list[str] = []
    while isinstance(e, ast.Attribute):
        chain.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name):
        return _MISSING
    if ctx.frame is not None and e.id in ctx.frame.f_code.co_varnames:
        return _MISSING  # a local of the calling function, not a module
    obj = ctx.globals.get(e.id, _MISSING)
    if obj is _MISSING:
        return _MISSING
    if is_invariant(obj):
        return obj
    if not _dali_owned(obj):
        return _MISSING
    for attr in reversed(chain):
        if not _dali_owned(obj):
            return _MISSING
        try:
            obj = inspect.getattr_static(obj, attr) if isinstance(obj, type) else getattr(obj, attr)
        except AttributeError:
            return _MISSING
        if isinstance(obj, (staticmethod, classmethod)):
            return _MISSING
    return obj


def _dali_owned(obj: Any) -> bool:
    if isinstance(obj, types.ModuleType):  # (``nvidia`` itself: the way to ``nvidia.dali``)
        return obj.__name__ == "nvidia" or obj.__name__.startswith(_DALI_PREFIXES)
    if isinstance(obj, type):
        return obj.__module__.startswith(_DALI_PREFIXES)
    return False


def _attribute(e: ast.Attribute, ctx: _Ctx) -> bool:
    v = _resolve(e, ctx)
    if v is _MISSING:
        return False
    return is_invariant(v) or _dali_constant(v)


def _dali_constant(v: Any) -> bool:
    if isinstance(v, (DType, Device)):
        return True
    if isinstance(v, enum.Enum):
        return type(v).__module__.startswith(_DALI_PREFIXES)
    if _hr_types.native(v) is not v:  # the reference's own enum values (not Python enums)
        return True
    return _constant_value(v)


def _constant_value(v: Any) -> bool:
    """A runtime value that is an immutable constant (or marked)."""
    if is_invariant(v):
        return True
    if v is None or isinstance(
        v, (bool, int, float, complex, str, bytes, DType, Device, enum.Enum)
    ):
        return True
    if isinstance(v, tuple):
        return all(_constant_value(x) for x in v)
    return False
