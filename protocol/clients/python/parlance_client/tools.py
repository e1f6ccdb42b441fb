"""Tools: Python functions the model may call during ``session/respond``.

A tool is a function plus what the model is told about it: a ``name``, a ``description``
and a JSON Schema of its ``parameters``. :func:`tool_from_function` derives the last two
from the function itself — the docstring's first paragraph, and the signature's type
hints — so a plain, annotated function is all a program writes::

    def get_weather(city: str, unit: Literal["C", "F"] = "C") -> str:
        '''The current weather in a city.

        Args:
            city: The city's name, e.g. "Paris".
        '''

    tool_from_function(get_weather).definition()
    # {"name": "get_weather", "description": "The current weather in a city.",
    #  "parameters": {"type": "object",
    #                 "properties": {"city": {"type": "string", "description": "The city's name, e.g. \\"Paris\\"."},
    #                                "unit": {"type": "string", "enum": ["C", "F"], "default": "C"}},
    #                 "required": ["city"]}}

Supported hints: ``str``, ``int``, ``float``, ``bool``, ``Optional[X]`` / ``X | None`` (not
required), ``Literal[...]`` (an ``enum`` of strings, integers or booleans), ``List[X]`` /
``list[X]`` / ``Sequence[X]``, ``Dict[str, X]`` / ``dict[str, X]`` / ``Mapping[str, X]``, a
``TypedDict`` (a nested object), ``Union[X, Y]`` (``anyOf``) and ``Annotated[X, ...]``, whose
string metadata becomes the property's ``description`` and whose dict metadata is merged
into its schema (``Annotated[int, {"minimum": 1}]``). A parameter with a default is not
required. Anything else raises :class:`TypeError` naming the parameter; pass an explicit
``parameters=`` schema instead.

The client (:meth:`parlance_client.ParlanceClient.tool`) registers tools and answers the
daemon's ``tool/call`` requests with them; this module has no I/O of its own.
"""

from __future__ import annotations

import asyncio
import collections.abc
import functools
import inspect
import json
import re
import threading
import time
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

__all__ = [
    "TOOL_NAME_PATTERN",
    "Tool",
    "ToolArgumentsError",
    "ToolInvocation",
    "current_tool_call",
    "describe",
    "function_schema",
    "json_content",
    "tool_from_function",
]

TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
"""What the daemon accepts as a tool's name."""

MAX_DESCRIPTION = 2000
"""The daemon's limit on a tool's description, in characters (longer ones are cut)."""

_NAME_RE = re.compile(TOOL_NAME_PATTERN)
_NoneType = type(None)
_UNION_TYPES: Tuple[Any, ...] = (typing.Union,)
try:  # Python 3.10+: `X | Y`
    import types as _types

    _UNION_TYPES += (_types.UnionType,)  # type: ignore[attr-defined,unused-ignore]
except AttributeError:  # pragma: no cover - Python 3.9
    pass
_REQUIRED_WRAPPERS = tuple(w for w in (getattr(typing, "Required", None), getattr(typing, "NotRequired", None)) if w)
_SUPPORTED = ("str, int, float, bool, Optional[X], Literal[...], List[X], Dict[str, X], a TypedDict, "
              "Union[...] or Annotated[X, ...]")


class ToolArgumentsError(ValueError):
    """The arguments of a ``tool/call`` do not fit the function (answered ``-32602``)."""


# -- schemas ---------------------------------------------------------------------------


def describe(obj: Any) -> Optional[str]:
    """The first paragraph of ``obj``'s docstring, on one line (None without a docstring).

    Cut to :data:`MAX_DESCRIPTION` characters."""
    doc = inspect.getdoc(obj)
    if not doc:
        return None
    first = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    text = " ".join(line.strip() for line in first.splitlines()).strip()
    if not text:
        return None
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def _docstring_params(obj: Any) -> Dict[str, str]:
    """Parameter descriptions from a docstring: Google style (``Args:`` then ``name: text``
    or ``name (type): text``) and Sphinx style (``:param name: text``)."""
    doc = inspect.getdoc(obj) or ""
    out: Dict[str, str] = {}
    lines = doc.splitlines()

    def indent(s: str) -> int:
        return len(s) - len(s.lstrip())

    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$", line)
        if m:
            text = [m.group(2).strip()]
            base = indent(line)
            i += 1
            while (i < len(lines) and lines[i].strip() and indent(lines[i]) > base
                   and not lines[i].strip().startswith(":")):
                text.append(lines[i].strip())
                i += 1
            out.setdefault(m.group(1), " ".join(t for t in text if t))
            continue
        if re.match(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$", line):
            head = indent(line)
            i += 1
            entry: Optional[str] = None
            entry_indent = -1
            while i < len(lines):
                cur = lines[i]
                if not cur.strip():
                    i += 1
                    continue
                if indent(cur) <= head:
                    break
                m = re.match(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", cur)
                if m and (entry is None or indent(cur) <= entry_indent):
                    entry, entry_indent = m.group(1), indent(cur)
                    out.setdefault(entry, m.group(2).strip())
                elif entry is not None:
                    out[entry] = (out[entry] + " " + cur.strip()).strip()
                i += 1
            continue
        i += 1
    return out


def _type_hints(func: Callable[..., Any]) -> Dict[str, Any]:
    """The resolved type hints of a function, a bound method, a ``functools.partial`` (its
    function's) or a callable object (its class's ``__call__``)."""
    if isinstance(func, functools.partial):
        target: Any = func.func
    elif inspect.isroutine(func):
        target = func
    else:
        target = type(func).__call__  # a callable object: its class's method
    try:
        return typing.get_type_hints(target, include_extras=True)
    except (NameError, TypeError, AttributeError) as e:  # e.g. unresolvable string annotations
        raise TypeError(f"cannot resolve the type hints of {_qualname(func)}: {e}") from e


def _qualname(func: Any) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func))


def _is_typeddict(tp: Any) -> bool:
    return (isinstance(tp, type) and issubclass(tp, dict)
            and hasattr(tp, "__required_keys__") and hasattr(tp, "__total__"))


def _strip_optional(tp: Any) -> Tuple[Any, bool]:
    """``Optional[X]`` → ``(X, True)``; anything else → ``(tp, False)``. ``Annotated``
    around an Optional keeps its metadata."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        inner, optional = _strip_optional(args[0])
        if optional:
            return typing.Annotated[(inner, *args[1:])], True
        return tp, False
    if origin in _UNION_TYPES:
        args = typing.get_args(tp)
        if _NoneType in args:
            rest = tuple(a for a in args if a is not _NoneType)
            if len(rest) == 1:
                return rest[0], True
            return typing.Union[rest], True
    return tp, False


def _literal_schema(values: Tuple[Any, ...], where: str) -> Dict[str, Any]:
    if values and all(isinstance(v, bool) for v in values):
        return {"type": "boolean", "enum": list(values)}
    if values and all(isinstance(v, str) for v in values):
        return {"type": "string", "enum": list(values)}
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return {"type": "integer", "enum": list(values)}
    raise TypeError(f"{where}: Literal{list(values)!r} mixes types; use strings, integers or booleans only")


def _schema_for(tp: Any, where: str) -> Dict[str, Any]:
    """The JSON Schema of one type hint (see the module's docstring for what is supported)."""
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is _NoneType or tp is None:
        return {"type": "null"}
    if _is_typeddict(tp):
        return _typeddict_schema(tp, where)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        schema = _schema_for(args[0], where)
        for meta in args[1:]:
            if isinstance(meta, str):
                schema["description"] = meta
            elif isinstance(meta, Mapping):
                schema.update(dict(meta))
        return schema
    if origin is typing.Literal:
        return _literal_schema(args, where)
    if origin in _UNION_TYPES:
        return {"anyOf": [_schema_for(a, where) for a in args]}
    if origin in (list, collections.abc.Sequence, collections.abc.MutableSequence):
        if len(args) != 1:
            raise TypeError(f"{where}: a list needs its item type, e.g. List[str]")
        return {"type": "array", "items": _schema_for(args[0], where)}
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        if len(args) != 2:
            raise TypeError(f"{where}: a dict needs its key and value types, e.g. Dict[str, int]")
        if args[0] is not str:
            raise TypeError(f"{where}: JSON object keys are strings; use Dict[str, X], not {_hint_name(tp)}")
        return {"type": "object", "additionalProperties": _schema_for(args[1], where)}
    if tp in (list, dict, typing.List, typing.Dict, collections.abc.Sequence, collections.abc.Mapping):
        raise TypeError(f"{where}: {_hint_name(tp)} needs its element types, e.g. List[str] or Dict[str, int]")
    raise TypeError(f"{where}: unsupported type hint {_hint_name(tp)}; supported: {_SUPPORTED} "
                    f"(or pass an explicit parameters= schema)")


def _hint_name(tp: Any) -> str:
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


def _typeddict_schema(tp: Any, where: str) -> Dict[str, Any]:
    hints = typing.get_type_hints(tp, include_extras=True)
    props: Dict[str, Any] = {}
    required: List[str] = []
    for key, hint in hints.items():
        while typing.get_origin(hint) in _REQUIRED_WRAPPERS:
            hint = typing.get_args(hint)[0]
        inner, optional = _strip_optional(hint)
        props[key] = _schema_for(inner, f"{where}, key '{key}' of {tp.__qualname__}")
        if key in tp.__required_keys__ and not optional:
            required.append(key)
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    desc = describe(tp) if tp.__doc__ else None
    if desc:
        schema["description"] = desc
    return schema


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError, RecursionError):
        return False


def function_schema(func: Callable[..., Any]) -> Dict[str, Any]:
    """The JSON Schema (``type: object``) of ``func``'s arguments, from its signature and
    type hints; each property's ``description`` comes from ``Annotated[X, "text"]`` or the
    docstring's ``Args:`` / ``:param x:`` entries.

    Raises :class:`TypeError` for a parameter without a type hint, a hint that is not
    supported, or a parameter that cannot be passed by name (positional-only, ``*args``);
    ``**kwargs`` is ignored."""
    name = _qualname(func)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as e:
        raise TypeError(f"cannot read the signature of {name}: {e}") from e
    hints = _type_hints(func)
    docs = _docstring_params(func.func if isinstance(func, functools.partial) else func)
    props: Dict[str, Any] = {}
    required: List[str] = []
    for p in sig.parameters.values():
        where = f"parameter '{p.name}' of {name}"
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(f"{where}: *{p.name} cannot be passed by name; use a List[...] parameter")
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{where} is positional-only; tools are called with named arguments")
        if p.name not in hints:
            raise TypeError(f"{where} has no type hint; annotate it ({_SUPPORTED}) "
                            f"or pass an explicit parameters= schema")
        hint, optional = _strip_optional(hints[p.name])
        schema = _schema_for(hint, where)
        if "description" not in schema and p.name in docs and docs[p.name]:
            schema["description"] = docs[p.name]
        has_default = p.default is not inspect.Parameter.empty
        if has_default and p.default is not None and _jsonable(p.default):
            schema.setdefault("default", p.default)
        props[p.name] = schema
        if not has_default and not optional:
            required.append(p.name)
    out: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


# -- tools -----------------------------------------------------------------------------


class Tool:
    """A tool: its ``name``, ``description`` and ``parameters`` schema (what the daemon and
    the model see, :meth:`definition`) and the ``function`` that runs it (None for a tool
    the program answers by hand, see :meth:`ParlanceClient.declare_tool`)."""

    def __init__(self, name: str, function: Optional[Callable[..., Any]] = None, description: Optional[str] = None,
                 parameters: Optional[Mapping[str, Any]] = None) -> None:
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"tool name {name!r} must match {TOOL_NAME_PATTERN} (pass name=…)")
        if parameters is not None:
            if not isinstance(parameters, Mapping) or parameters.get("type") != "object":
                raise ValueError(f"tool {name}: parameters must be a JSON Schema object with \"type\": \"object\"")
            if not _jsonable(dict(parameters)):
                raise ValueError(f"tool {name}: parameters must be JSON-serialisable")
        self.name = name
        self.function = function
        self.description = description
        self.parameters: Dict[str, Any] = json.loads(json.dumps(dict(parameters))) if parameters is not None \
            else {"type": "object", "properties": {}}
        self._fill_none: Tuple[str, ...] = ()
        self._signature: Optional[inspect.Signature] = None
        if function is not None:
            try:
                self._signature = inspect.signature(function)
            except (TypeError, ValueError):
                self._signature = None
            if self._signature is not None:
                # Optional parameters without a default are not required: pass None when absent.
                try:
                    hints = _type_hints(function)
                except TypeError:
                    hints = {}
                self._fill_none = tuple(
                    p.name for p in self._signature.parameters.values()
                    if p.default is inspect.Parameter.empty and p.name in hints and _strip_optional(hints[p.name])[1]
                    and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))

    def definition(self) -> Dict[str, Any]:
        """``{"name", "description"?, "parameters"}``, an element of ``session/create``'s ``tools``."""
        d: Dict[str, Any] = {"name": self.name}
        if self.description:
            d["description"] = self.description
        d["parameters"] = json.loads(json.dumps(self.parameters))
        return d

    def bind(self, arguments: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """The function's ``(args, kwargs)`` for a call's ``arguments`` object; raises
        :class:`ToolArgumentsError` when they do not fit the signature."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise ToolArgumentsError(f"arguments of {self.name} must be a JSON object, got {type(arguments).__name__}")
        if self.function is None:
            raise ToolArgumentsError(f"tool {self.name} has no function")
        kwargs = dict(arguments)
        for n in self._fill_none:
            kwargs.setdefault(n, None)
        if self._signature is None:  # a builtin without a signature: pass them as given
            return (), kwargs
        try:
            bound = self._signature.bind(**kwargs)
        except TypeError as e:
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {e}") from None
        return bound.args, bound.kwargs

    def invoke(self, arguments: Any) -> Any:
        """Run the function with a call's ``arguments`` and return what it returns; an
        ``async def`` function (or one returning an awaitable) runs to completion in a new
        event loop on the calling thread."""
        args, kwargs = self.bind(arguments)
        assert self.function is not None
        result = self.function(*args, **kwargs)
        if inspect.isawaitable(result):
            result = asyncio.run(_await(result))
        return result

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, function={_qualname(self.function) if self.function else None})"


async def _await(a: Any) -> Any:
    return await a


def tool_from_function(func: Callable[..., Any], *, name: Optional[str] = None, description: Optional[str] = None,
                       parameters: Optional[Mapping[str, Any]] = None) -> Tool:
    """A :class:`Tool` for ``func``: ``name`` defaults to ``func.__name__``, ``description``
    to the docstring's first paragraph, ``parameters`` to :func:`function_schema`\\ (func).
    An explicit ``parameters`` schema is used as given (the function then needs no hints)."""
    if not callable(func):
        raise TypeError(f"a tool must be callable, got {func!r}")
    target = func.func if isinstance(func, functools.partial) else func
    n = name if name is not None else getattr(target, "__name__", None) or type(func).__name__
    d = description if description is not None else describe(target)
    if d is None and not inspect.isroutine(target) and not isinstance(func, functools.partial):
        d = describe(type(func).__call__)
    schema = parameters if parameters is not None else function_schema(func)
    return Tool(n, func, d, schema)


def json_content(value: Any) -> Any:
    """A tool's return value as ``tool/call`` content: as is when it is JSON-serialisable
    (no NaN/infinity), else ``str(value)``."""
    return value if _jsonable(value) else str(value)


# -- calls -----------------------------------------------------------------------------


class ToolInvocation:
    """One ``tool/call`` the client received and what became of it.

    ``request_id`` is the JSON-RPC id of the daemon's request; ``call_id``, ``session_id``,
    ``name`` and ``arguments`` come from its params. ``state`` is ``"running"``, then
    ``"finished"`` (``output`` holds the content sent) or ``"failed"`` (``error`` holds the
    JSON-RPC error sent). ``cancelled`` is set when the daemon cancelled the call
    (``$/cancelRequest``); a cancelled call's answer is not sent (``answered`` stays False).
    A long-running function can poll :func:`current_tool_call`\\ ``().cancelled``.
    """

    def __init__(self, request_id: Any, params: Mapping[str, Any]) -> None:
        self.request_id = request_id
        self.call_id: Optional[str] = params.get("callId")
        self.session_id: Optional[str] = params.get("sessionId")
        self.name: str = str(params.get("name"))
        self.arguments: Any = params.get("arguments")
        self.state = "running"
        self.output: Any = None
        self.error: Optional[Dict[str, Any]] = None
        self.answered = False
        self.started = time.monotonic()
        self.ms: Optional[float] = None
        self._cancelled = threading.Event()
        self._done = threading.Event()

    @property
    def cancelled(self) -> bool:
        """True once the daemon sent ``$/cancelRequest`` for this call."""
        return self._cancelled.is_set()

    def done(self) -> bool:
        """True once the function returned or raised (and the answer, if any, was sent)."""
        return self._done.is_set()

    def wait(self, timeout: Optional[float] = None) -> "ToolInvocation":
        """Wait until :meth:`done`; raises :class:`TimeoutError` after ``timeout`` seconds."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"tool call {self.name} ({self.call_id}) still running after {timeout} s")
        return self

    def wait_cancelled(self, timeout: Optional[float] = None) -> bool:
        """Wait until the call is cancelled (True) or ``timeout`` passes (False)."""
        return self._cancelled.wait(timeout)

    def _finish(self, output: Any = None, error: Optional[Dict[str, Any]] = None) -> None:
        self.ms = (time.monotonic() - self.started) * 1000.0
        if error is not None:
            self.state, self.error = "failed", error
        else:
            self.state, self.output = "finished", output

    def __repr__(self) -> str:
        return (f"ToolInvocation({self.name!r}, call_id={self.call_id!r}, arguments={self.arguments!r}, "
                f"state={self.state!r}{', cancelled' if self.cancelled else ''})")


_current = threading.local()


def current_tool_call() -> Optional[ToolInvocation]:
    """Inside a tool's function: the :class:`ToolInvocation` being run (None elsewhere)."""
    return getattr(_current, "invocation", None)


def _set_current(inv: Optional[ToolInvocation]) -> None:
    _current.invocation = inv
