"""Deriving a tool's definition from a Python function: its parameters' JSON Schema from
the signature and type hints, its description from the docstring."""

from __future__ import annotations

import functools
import json
import sys
from typing import Annotated, Any, Dict, List, Literal, Mapping, Optional, Sequence, Set, Tuple, TypedDict, Union

import pytest

from parlance_client import Tool, function_schema, tool_from_function
from parlance_client.tools import MAX_DESCRIPTION, describe


def props(func: Any) -> Dict[str, Any]:
    return function_schema(func)["properties"]  # type: ignore[no-any-return]


def required(func: Any) -> List[str]:
    return function_schema(func).get("required", [])  # type: ignore[no-any-return]


# -- scalar types ------------------------------------------------------------------------


def test_scalars() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None: ...

    assert function_schema(f) == {
        "type": "object",
        "properties": {"s": {"type": "string"}, "i": {"type": "integer"}, "x": {"type": "number"},
                       "b": {"type": "boolean"}},
        "required": ["s", "i", "x", "b"],
    }


def test_no_parameters() -> None:
    def now() -> None: ...

    assert function_schema(now) == {"type": "object", "properties": {}}


def test_defaults_are_not_required_and_are_annotated() -> None:
    def f(city: str, days: int = 3, unit: str = "C", flag: bool = False, ratio: float = 0.5) -> None: ...

    assert required(f) == ["city"]
    p = props(f)
    assert p["days"] == {"type": "integer", "default": 3}
    assert p["unit"] == {"type": "string", "default": "C"}
    assert p["flag"] == {"type": "boolean", "default": False}
    assert p["ratio"] == {"type": "number", "default": 0.5}


def test_none_and_unserialisable_defaults_are_not_annotated() -> None:
    marker = object()

    def f(a: Optional[str] = None, b: str = marker, c: float = float("nan")) -> None: ...  # type: ignore[assignment]

    assert props(f) == {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "number"}}
    assert required(f) == []


def test_keyword_only_parameters() -> None:
    def f(*, city: str, days: int = 1) -> None: ...

    assert required(f) == ["city"]
    assert set(props(f)) == {"city", "days"}


# -- Optional, Union, Literal ---------------------------------------------------------------


def test_optional_is_not_required() -> None:
    def f(a: Optional[str], b: Union[int, None], c: "Optional[List[int]]" = None) -> None: ...

    assert required(f) == []
    assert props(f) == {"a": {"type": "string"}, "b": {"type": "integer"},
                        "c": {"type": "array", "items": {"type": "integer"}}}


@pytest.mark.skipif(sys.version_info < (3, 10), reason="X | None needs Python 3.10")
def test_pipe_union_syntax() -> None:
    ns: Dict[str, Any] = {}
    exec("def f(a: str | None, b: int | str) -> None: ...", ns)
    assert required(ns["f"]) == ["b"]
    assert props(ns["f"]) == {"a": {"type": "string"}, "b": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}


def test_union_is_any_of() -> None:
    def f(v: Union[int, str]) -> None: ...

    assert props(f)["v"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def test_optional_union_is_not_required_any_of() -> None:
    def f(v: Optional[Union[int, str]]) -> None: ...

    assert required(f) == []
    assert props(f)["v"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def test_nullable_items_inside_a_list() -> None:
    def f(v: List[Optional[int]]) -> None: ...

    assert props(f)["v"] == {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}


def test_literal_strings_ints_bools() -> None:
    def f(unit: Literal["C", "F"], level: Literal[1, 2, 3], on: Literal[True]) -> None: ...

    p = props(f)
    assert p["unit"] == {"type": "string", "enum": ["C", "F"]}
    assert p["level"] == {"type": "integer", "enum": [1, 2, 3]}
    assert p["on"] == {"type": "boolean", "enum": [True]}


def test_literal_with_default() -> None:
    def f(unit: Literal["C", "F"] = "C") -> None: ...

    assert props(f)["unit"] == {"type": "string", "enum": ["C", "F"], "default": "C"}
    assert required(f) == []


def test_mixed_literal_is_refused() -> None:
    def f(v: Literal["a", 1]) -> None: ...

    with pytest.raises(TypeError, match=r"parameter 'v' of .*f.*mixes types"):
        function_schema(f)


# -- containers --------------------------------------------------------------------------


def test_lists_typing_and_builtin() -> None:
    def f(a: List[str], b: "list[int]", c: Sequence[float], d: List[List[bool]]) -> None: ...

    p = props(f)
    assert p["a"] == {"type": "array", "items": {"type": "string"}}
    assert p["b"] == {"type": "array", "items": {"type": "integer"}}
    assert p["c"] == {"type": "array", "items": {"type": "number"}}
    assert p["d"] == {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}}


def test_list_of_literals() -> None:
    def f(days: List[Literal["mon", "tue"]]) -> None: ...

    assert props(f)["days"] == {"type": "array", "items": {"type": "string", "enum": ["mon", "tue"]}}


def test_dicts_typing_and_builtin() -> None:
    def f(a: Dict[str, int], b: "dict[str, List[str]]", c: Mapping[str, float]) -> None: ...

    p = props(f)
    assert p["a"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["b"] == {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}
    assert p["c"] == {"type": "object", "additionalProperties": {"type": "number"}}


class Address(TypedDict):
    """A postal address.

    Only the first paragraph is the description."""

    street: str
    city: str
    zip: Optional[str]


class Options(TypedDict, total=False):
    verbose: bool
    depth: int


def test_typeddict_is_a_nested_object() -> None:
    def f(to: Address, opts: Optional[Options] = None) -> None: ...

    p = props(f)
    assert p["to"] == {
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}},
        "required": ["street", "city"],
        "description": "A postal address.",
    }
    assert p["opts"] == {"type": "object", "properties": {"verbose": {"type": "boolean"}, "depth": {"type": "integer"}}}
    assert required(f) == ["to"]


def test_list_of_typeddicts() -> None:
    def f(stops: List[Address]) -> None: ...

    assert props(f)["stops"]["items"]["required"] == ["street", "city"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="NotRequired needs Python 3.11")
def test_typeddict_not_required() -> None:
    ns: Dict[str, Any] = {}
    source = ("from typing import TypedDict, NotRequired, Required\n"
              "class T(TypedDict, total=False):\n    a: Required[int]\n    b: str\n"
              "class U(TypedDict):\n    a: int\n    b: NotRequired[str]\n")
    exec(compile(source, "<typeddicts>", "exec", dont_inherit=True), ns)  # without this module's __future__
    for td in (ns["T"], ns["U"]):
        def f(x: Any) -> None: ...
        f.__annotations__ = {"x": td}
        assert props(f)["x"] == {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                                 "required": ["a"]}


# -- Annotated ---------------------------------------------------------------------------


def test_annotated_description_and_constraints() -> None:
    def f(city: Annotated[str, "The city's name", {"maxLength": 80}],
          days: Annotated[int, {"minimum": 1, "maximum": 7}] = 1,
          tags: Annotated[List[str], {"minItems": 1, "maxItems": 3}] = ["x"]) -> None: ...  # noqa: B006

    p = props(f)
    assert p["city"] == {"type": "string", "description": "The city's name", "maxLength": 80}
    assert p["days"] == {"type": "integer", "minimum": 1, "maximum": 7, "default": 1}
    assert p["tags"] == {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "default": ["x"]}


def test_optional_annotated_keeps_metadata() -> None:
    def f(a: Optional[Annotated[int, "count"]], b: Annotated[Optional[int], "other"]) -> None: ...

    assert props(f) == {"a": {"type": "integer", "description": "count"}, "b": {"type": "integer", "description": "other"}}
    assert required(f) == []


# -- unsupported -------------------------------------------------------------------------


def test_missing_hint_is_refused_with_the_parameter_named() -> None:
    def get_weather(city, days: int = 1):  # type: ignore[no-untyped-def]
        ...

    with pytest.raises(TypeError, match=r"parameter 'city' of .*get_weather has no type hint.*parameters="):
        function_schema(get_weather)


def test_missing_hint_is_refused_by_the_decorator_path_too() -> None:
    with pytest.raises(TypeError, match="no type hint"):
        tool_from_function(lambda x: x, name="identity")


@pytest.mark.parametrize("hint, message", [
    (bytes, "unsupported type hint bytes"),
    (Set[int], "unsupported type hint"),
    (Tuple[int, int], "unsupported type hint"),
    (Any, "unsupported type hint"),
    (object, "unsupported type hint object"),
    (list, "needs its element types"),
    (dict, "needs its element types"),
    (List, "needs its item type"),
    (Dict, "needs its key and value types"),
    (Dict[int, str], "keys are strings"),
])
def test_unsupported_hints_are_refused(hint: Any, message: str) -> None:
    def f(v: Any) -> None: ...
    f.__annotations__ = {"v": hint}
    with pytest.raises(TypeError, match=message) as e:
        function_schema(f)
    assert "parameter 'v'" in str(e.value)


def test_unsupported_hint_nested_names_the_parameter() -> None:
    def f(v: List[bytes]) -> None: ...

    with pytest.raises(TypeError, match=r"parameter 'v' .*unsupported type hint bytes"):
        function_schema(f)


def test_star_args_and_positional_only_are_refused_kwargs_ignored() -> None:
    def a(*names: str) -> None: ...

    ns: Dict[str, Any] = {}
    exec("def b(x: int, /) -> None: ...", ns)

    def c(x: int, **extra: Any) -> None: ...

    with pytest.raises(TypeError, match=r"\*names cannot be passed by name"):
        function_schema(a)
    with pytest.raises(TypeError, match="positional-only"):
        function_schema(ns["b"])
    assert function_schema(c) == {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def test_unresolvable_string_annotation() -> None:
    def f(v: "NoSuchType") -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="cannot resolve the type hints"):
        function_schema(f)


# -- callables of every kind ---------------------------------------------------------------


class Weather:
    def __init__(self) -> None:
        self.unit = "C"

    def get(self, city: str) -> str:
        """Weather for a city."""
        return city

    def __call__(self, city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return city


def test_bound_method_partial_and_callable_object() -> None:
    w = Weather()
    assert function_schema(w.get) == {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert function_schema(w)["required"] == ["city"]
    assert tool_from_function(w.get).name == "get"
    assert tool_from_function(w).name == "Weather"
    assert tool_from_function(w).description == "Forecast for a city."
    part = functools.partial(w.__call__, days=3)
    assert function_schema(part)["properties"]["days"] == {"type": "integer", "default": 3}


def test_string_annotations_from_future_import_resolve() -> None:
    # This module uses `from __future__ import annotations`: every hint above was a string.
    def f(a: Optional[Address]) -> None: ...

    assert props(f)["a"]["type"] == "object"


# -- descriptions --------------------------------------------------------------------------


def test_description_is_the_first_paragraph_on_one_line() -> None:
    def get_weather(city: str) -> str:
        """Get the current weather
        for a city.

        More detail that the model does not need.

        Args:
            city: The city.
        """
        return city

    t = tool_from_function(get_weather)
    assert t.description == "Get the current weather for a city."
    assert t.definition() == {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}},
                       "required": ["city"]},
    }


def test_no_docstring_means_no_description_key() -> None:
    def f(x: int) -> int:
        return x

    d = tool_from_function(f).definition()
    assert "description" not in d and d["name"] == "f"


def test_long_description_is_cut() -> None:
    def f() -> None: ...
    f.__doc__ = "word " * 1000
    d = describe(f)
    assert d is not None and len(d) == MAX_DESCRIPTION and d.endswith("…")


def test_google_style_parameter_descriptions() -> None:
    def f(city: str, unit: str = "C", days: int = 1) -> None:
        """Forecast.

        Args:
            city (str): The city's name,
                as written locally.
            unit: C or F.

        Returns:
            Nothing.
        """

    p = props(f)
    assert p["city"]["description"] == "The city's name, as written locally."
    assert p["unit"]["description"] == "C or F."
    assert "description" not in p["days"]


def test_sphinx_style_parameter_descriptions() -> None:
    def f(city: str, unit: str = "C") -> None:
        """Forecast.

        :param city: The city's name,
            as written locally.
        :param str unit: C or F.
        :returns: nothing
        """

    p = props(f)
    assert p["city"]["description"] == "The city's name, as written locally."
    assert p["unit"]["description"] == "C or F."


def test_annotated_description_wins_over_docstring() -> None:
    def f(city: Annotated[str, "from Annotated"]) -> None:
        """X.

        Args:
            city: from the docstring
        """

    assert props(f)["city"]["description"] == "from Annotated"


# -- explicit overrides and names ----------------------------------------------------------------


def test_explicit_parameters_override_and_need_no_hints() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}}, "required": ["city"]}

    def get_weather(city):  # type: ignore[no-untyped-def]
        return city

    t = tool_from_function(get_weather, name="weather", description="Weather now.", parameters=schema)
    assert t.definition() == {"name": "weather", "description": "Weather now.", "parameters": schema}
    schema["required"] = []  # the tool keeps its own copy
    assert t.definition()["parameters"]["required"] == ["city"]


@pytest.mark.parametrize("bad", [{"type": "string"}, {"properties": {}}, "object"])
def test_explicit_parameters_must_be_an_object_schema(bad: Any) -> None:
    with pytest.raises(ValueError, match="type.*object"):
        tool_from_function(lambda: None, name="x", parameters=bad)


@pytest.mark.parametrize("name", ["", "has space", "dot.ted", "x" * 65, "é"])
def test_invalid_names_are_refused(name: str) -> None:
    def f() -> None: ...

    with pytest.raises(ValueError, match="must match"):
        tool_from_function(f, name=name)


def test_lambda_needs_a_name() -> None:
    with pytest.raises(ValueError, match="<lambda>"):
        tool_from_function(lambda: None, parameters={"type": "object"})


def test_valid_names() -> None:
    for n in ("a", "get-weather_2", "X" * 64):
        assert Tool(n).name == n


def test_definitions_are_json() -> None:
    def f(a: Dict[str, List[Address]], b: Literal["x"] = "x") -> None:
        """Doc."""

    d = tool_from_function(f).definition()
    assert json.loads(json.dumps(d)) == d
