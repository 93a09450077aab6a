import enum
from typing import Annotated, Literal, Optional

import pytest

import whileai as wai
from whileai_core.tools import as_tool, as_tools, schemas


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_schema_from_signature_and_docstring():
    @wai.tool
    def search_orders(query: str, limit: int = 10, exact: bool = False, tags: list[str] | None = None,
                      score: float = 0.5, mode: Literal["fast", "full"] = "fast", color: Color = Color.RED,
                      extra: dict = None, note: Annotated[str, "free text"] = "") -> list:
        """Search orders.

        Longer prose that is not the summary.

        Args:
            query: what to look for
            limit (int): how many
                at most
        """

    fn = search_orders.schema["function"]
    assert search_orders.schema["type"] == "function"
    assert fn["name"] == "search_orders"
    assert fn["description"] == "Search orders."
    props = fn["parameters"]["properties"]
    assert fn["parameters"]["required"] == ["query"]
    assert props["query"] == {"type": "string", "description": "what to look for"}
    assert props["limit"] == {"type": "integer", "description": "how many at most", "default": 10}
    assert props["exact"] == {"type": "boolean", "default": False}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["score"] == {"type": "number", "default": 0.5}
    assert props["mode"] == {"enum": ["fast", "full"], "type": "string", "default": "fast"}
    assert props["color"] == {"enum": ["red", "blue"], "type": "string", "default": "red"}
    assert props["extra"] == {"type": "object"}
    assert props["note"] == {"type": "string", "description": "free text", "default": ""}


def test_optional_and_union():
    @wai.tool
    def f(a: Optional[int], b: int | str = 3) -> dict:
        """F."""

    props = f.parameters["properties"]
    assert props["a"] == {"type": "integer"}
    assert props["b"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 3}
    assert f.required == ["a"]


def test_no_required_key_when_all_optional_and_call_passes_through():
    @wai.tool(name="lookup", description="Find it.")
    def f(x: int = 1) -> int:
        return x * 2

    assert "required" not in f.parameters
    assert f.name == "lookup" and f.description == "Find it."
    assert f(x=4) == 8


def test_bad_annotation_names_the_parameter():
    class Weird:
        pass

    with pytest.raises(TypeError, match=r"parameter 'thing'"):
        @wai.tool
        def g(thing: Weird) -> dict:
            """G."""


@pytest.mark.parametrize("spec", [
    {"type": "function", "function": {"name": "get_user", "description": "d",
                                      "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}},
                                                     "required": ["user_id"]}}},
    {"name": "get_user", "description": "d",
     "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}},
    {"name": "get_user", "description": "d",
     "input_schema": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}},
])
def test_schema_dict_shapes_are_accepted(spec):
    t = as_tool(spec)
    assert t.name == "get_user" and t.required == ["user_id"]
    assert schemas([spec])[0]["function"]["parameters"]["required"] == ["user_id"]
    with pytest.raises(TypeError, match="no function body"):
        t("x")


def test_bad_tools_entries():
    with pytest.raises(TypeError, match="tools= takes"):
        as_tools([42])
    with pytest.raises(TypeError, match="no 'name'"):
        as_tool({"description": "x"})

    @wai.tool
    def a() -> dict:
        """A."""

    with pytest.raises(ValueError, match="unique"):
        as_tools([a, a])


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_schema_dict_tools_are_checked_like_decorated_ones():
    with pytest.raises(ValueError, match="tool schema name 'get order' must be 1-64 letters"):
        wai.simulate(lambda m: "ok.", tools=[{"name": "get order"}], repeats=1, budget=2)
    with pytest.raises(ValueError, match="tool schema name '' must be"):
        wai.world([{"name": ""}])
    with pytest.raises(TypeError, match=r"parameters\['properties'\] must be a dict"):
        wai.world([{"name": "get_x", "parameters": {"type": "object", "properties": ["a"]}}])
    with pytest.raises(TypeError, match=r"parameters\['required'\] must be a list of names, e.g. \['order_id'\]"):
        wai.world([{"name": "get_x", "parameters": {"type": "object", "properties": {"order_id": {}},
                                                    "required": "order_id"}}])
    good = wai.world([{"type": "function", "function": {"name": "get_x", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}])
    assert good.call("get_x", {})["error"] == "get_x: missing required argument 'order_id'"


def test_tool_on_something_without_a_signature_is_named():
    with pytest.raises(TypeError, match="@tool could not read a signature from <class 'int'>"):
        wai.tool(int)


# -- the SDK's reference §1.1: tools from a functools.partial and a callable instance, params_json_schema ---
def test_tool_from_a_partial_and_from_a_callable_instance():
    import functools

    import whileai as wai

    def lookup(order_id: str, region: str = "eu") -> dict:
        """Look up an order by id."""
        return {"order_id": order_id, "region": region}

    fixed = wai.tool(functools.partial(lookup, region="us"))
    assert fixed.name == "lookup" and fixed.description == "Look up an order by id."
    assert fixed.parameters["required"] == ["order_id"]
    assert fixed(order_id="A1") == {"order_id": "A1", "region": "us"}

    class Desk:
        def __call__(self, order_id: str) -> dict:
            """Ask the desk about an order."""
            return {"order_id": order_id, "desk": True}

    desk = wai.tool(Desk())
    assert desk.name == "Desk" and desk.description == "Ask the desk about an order."
    assert desk.parameters == {"type": "object", "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}
    assert desk.params_json_schema is desk.parameters and desk(order_id="A2")["desk"] is True
    assert wai.dispatch([fixed, desk])("Desk", {"order_id": "A3"}) == {"order_id": "A3", "desk": True}
