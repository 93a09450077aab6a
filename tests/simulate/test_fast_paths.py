"""The rollout hot path's fast paths (issue 34) give what the slow paths give, over seeded generators of values:
``rows.json_encoder`` is ``json.dumps`` byte for byte (errors included), ``rows.uniform``'s memo returns the hash
it remembers, ``world.shape_value``'s dict path is ``record``, ``transport.decode_arguments`` is ``json.loads``,
``rows.opaque``'s plain-dict path is its Mapping path, and a run's lineage copied per row is the one built."""

from __future__ import annotations

import enum
import hashlib
import json
import math
import random
import types
from typing import Any

import pytest

from whileai_core import rows
from whileai_core.models.transport import _parse_arguments, decode_arguments
from whileai_core.rows import json_encoder, opaque, uniform
from whileai_core.simulate import rollout as rollout_module
from whileai_core.simulate.world import World, record, shape_value

SEEDS = range(6)
TEXTS = ["", "a", "A1000", "Zoë O’Brien", "🐋 «edge»", "tab\there", 'quote " and \\ slash', "\u2028", "日本語",
         "\x00\x1f", "ünïcödé " * 3]
FLOATS = [0.0, -0.0, 1.5, 1e16, 1e-7, 123456789.125, 2.0**63, -3.25e-300, 0.1 + 0.2, 10.0]


class Color(enum.IntEnum):
    RED = 1


class Tag(str):
    """A str subclass (a Scenario is one)."""


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-ish value: strings (non-ASCII among them), ints (past 64 bits too), floats, bools, None, and
    nested dicts, lists and tuples; str and int subclasses now and then."""
    pick = rng.randrange(12 if depth < 3 else 7)
    if pick == 0:
        return rng.choice(TEXTS) + str(rng.randrange(100))
    if pick == 1:
        return rng.choice([0, 1, -1, 7, 2**31, 2**63 + 5, -(2**70), rng.randrange(-10**6, 10**6)])
    if pick == 2:
        return rng.choice(FLOATS) * rng.choice([1, -1])
    if pick == 3:
        return rng.choice([True, False, None])
    if pick == 4:
        return rng.random() * 10 ** rng.randrange(-8, 20)
    if pick == 5:
        return Tag(rng.choice(TEXTS))
    if pick == 6:
        return Color.RED
    if pick in (7, 8, 9):
        return {rng.choice(TEXTS) + str(i): _value(rng, depth + 1) for i in range(rng.randrange(5))}
    if pick == 10:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return tuple(_value(rng, depth + 1) for _ in range(rng.randrange(4)))


def _outcome(fn: Any, value: Any) -> tuple[str, str]:
    """("ok", text) or (the exception's type name, its message)."""
    try:
        return "ok", fn(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


SETTINGS = [{"ensure_ascii": a, "sort_keys": s, "default": d} for a in (True, False) for s in (False, True)
            for d in (None, str)]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
@pytest.mark.parametrize("seed", SEEDS)
def test_json_encoder_is_json_dumps_byte_for_byte(settings, seed):
    rng = random.Random(seed)
    encode = json_encoder(**settings)
    for _ in range(300):
        value = _value(rng)
        assert encode(value) == json.dumps(value, **settings)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_json_encoder_fails_as_json_dumps_fails(settings):
    loop: list[Any] = [1]
    loop.append(loop)
    nested: dict[str, Any] = {"a": 1}
    nested["self"] = nested
    cases = [loop, nested, {"x": [loop]}, object(), {"a": object()}, {1: "int key", "a": 2}, {(1, 2): "tuple key"},
             float("nan"), {"inf": float("inf")}, [float("-inf")], {"a": {1, 2}}, b"bytes"]
    encode = json_encoder(**settings)
    for value in cases:
        assert _outcome(encode, value) == _outcome(lambda v: json.dumps(v, **settings), value), value
    assert encode({"after": "a failure"}) == json.dumps({"after": "a failure"}, **settings)  # nothing left stale


def _slow_uniform(*parts: Any) -> float:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return int(hashlib.sha256(blob).hexdigest()[:12], 16) / float(16**12)


@pytest.mark.parametrize("seed", SEEDS)
def test_uniform_memo_gives_the_hash_of_the_parts(seed):
    rng = random.Random(seed)
    pool: list[Any] = [0, 1, 2, True, False, 1.0, 0.0, -0.0, None, "1", "a", "order", Tag("a"), 2**70, (1,), [1]]
    calls = [tuple(rng.choice(pool) for _ in range(rng.randrange(1, 5))) for _ in range(200)]
    for parts in calls * 2 + calls[::-1]:  # each seen again: from the memo where it may be
        assert uniform(*parts) == _slow_uniform(*parts), parts
        assert uniform(*parts, memo=0) == _slow_uniform(*parts), parts


def test_uniform_memo_stays_bounded():
    for i in range(50):
        uniform("bounded", i, memo=8)
        assert len(rows._uniforms) <= 8
    assert uniform("bounded", 3, memo=8) == _slow_uniform("bounded", 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_shape_value_of_a_dict_tool_is_its_record(seed):
    def get_order(order_id: str) -> dict:
        """Look up an order."""
        return {}

    def refund_order(order_id: str) -> None:
        """Refund an order."""

    def lookup(name: str):  # unannotated: a record too
        """Look something up."""

    world = World([get_order, refund_order, lookup])
    rng = random.Random(seed)
    for _ in range(60):
        t = world.tools[rng.choice(sorted(world.tools))]
        ref = rng.choice([None, "A1000", "Zoë-7", str(rng.randrange(10**6))])
        edge = rng.random() < 0.3
        salt = (seed, t.name, ref, rng.choice(["t-1", None, "t-x"]))
        for annotation in (dict, None):
            assert shape_value(annotation, t, ref, edge=edge, salt=salt) == record(t, ref, edge=edge, salt=salt)


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (NaN equal to NaN, -0.0 apart from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _plain(value: Any) -> Any:
    """A decoded JSON value's shape: tuples as lists, str and int subclasses as str and int."""
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("seed", SEEDS)
def test_decode_arguments_is_json_loads(seed):
    rng = random.Random(seed)
    texts = ['{"a": NaN}', '{"a": Infinity}', '[-Infinity]', '{"a": 1e400}', '{"big": 123456789012345678901234567890}',
             '{"a": "\\ud800"}', '{"a": 1, "a": 2}', '{"a": 1,}', "{'a': 1}", '  {"a": [1, 2.50, -0.0, -0]}  ',
             '{"a": 1} x', "", " ", "null", "[]", '"text"', "1.0", '{"a": "\\u00e9\\n"}', "{", "tru"]
    texts += [json.dumps(_plain(_value(rng)), ensure_ascii=rng.random() < 0.5) for _ in range(200)]
    for text in texts:
        try:
            want: Any = ("ok", json.loads(text))
        except json.JSONDecodeError as exc:
            want = ("error", exc.msg)
        try:
            got: Any = ("ok", decode_arguments(text))
        except json.JSONDecodeError as exc:
            got = ("error", exc.msg)
        assert got[0] == want[0] and (_same(got[1], want[1]) if got[0] == "ok" else got[1] == want[1]), text
        if text:  # a tool call's (arguments, why they are not an object) as json.loads would have them
            reason = (f"arguments are not valid JSON ({want[1]})" if want[0] == "error" else
                      None if isinstance(want[1], dict) else f"arguments are JSON {type(want[1]).__name__}, not an object")
            assert _parse_arguments(text)[1] == reason


@pytest.mark.parametrize("seed", SEEDS)
def test_opaque_of_a_plain_dict_is_its_mapping_path(seed):
    rng = random.Random(seed)
    odd = [object(), types.SimpleNamespace(a=1), Color.RED, {"deep": object()}, [object()]]
    for _ in range(200):
        value = _value(rng)
        if isinstance(value, dict) and value and rng.random() < 0.5:
            value[rng.choice(list(value))] = rng.choice(odd)
        if isinstance(value, dict):
            assert opaque(value) == opaque(types.MappingProxyType(value))


def test_lineage_copied_per_row_is_the_one_built():
    def fresh(*args: Any) -> dict[str, Any]:
        rollout_module._last_lineage[0] = ((), {})
        return rollout_module._lineage(*args)

    cases = [("m", None, 0, "r1", None, None), ("m", None, 0, "r1", None, None), ("m", "Be brief.", 0, "r1", "x", "p"),
             ("m", None, True, "r1", None, None), ("m", None, 1, "r1", None, None), ("m", None, 1.0, "r1", None, None),
             ("other", None, 1, "r2", None, None)]
    for args in cases + cases[::-1]:
        got = rollout_module._lineage(*args)
        want = fresh(*args)
        assert _same(got, want) and got is not want
        got["writer"] = "changed"  # a row's lineage is stamped further: the next row's is untouched
        assert rollout_module._lineage(*args)["writer"] == "template"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_parsed_reply_is_the_completion_its_init_builds(seed):
    import dataclasses
    import pickle

    from whileai_core.models.openai import OpenAI
    from whileai_core.models.protocol import Completion, ToolCall

    rng = random.Random(seed)
    backend = OpenAI("m", api_key="k")
    for i in range(40):
        calls = [{"id": f"c{i}{j}" if rng.random() < 0.8 else None, "type": "function",
                  "function": {"name": rng.choice(["get_order", "lookup"]),
                               "arguments": rng.choice([json.dumps(_plain(_value(rng))), "{broken", "",
                                                        json.dumps({"order_id": rng.choice(TEXTS)})])}}
                 for j in range(rng.randrange(3))]
        message = {"role": "assistant", "content": rng.choice([None, "", "Done.", "Zoë?"])}
        if calls:
            message["tool_calls"] = calls
        data = {"model": rng.choice(["m", None]), "choices": [{"message": message,
                                                                "finish_reason": rng.choice([None, "stop", "length"])}],
                "usage": rng.choice([None, {"prompt_tokens": rng.randrange(99), "completion_tokens": 3}])}
        waits = tuple(rng.random() for _ in range(rng.randrange(2)))
        got = backend._parse(data, 1 + i % 3, waits)
        want = Completion(**{f.name: getattr(got, f.name) for f in dataclasses.fields(Completion)})
        assert got == want and repr(got) == repr(want) and vars(got) == vars(want)
        assert list(vars(got)) == list(vars(want))  # the fields in __init__'s order
        assert pickle.loads(pickle.dumps(got)) == want
        for call in got.tool_calls:
            again = ToolCall(call.id, call.name, call.arguments, call.arguments_error)
            assert call == again and repr(call) == repr(again) and list(vars(call)) == list(vars(again))
        with pytest.raises(dataclasses.FrozenInstanceError):
            got.text = "changed"  # type: ignore[misc]


def _steps(rng: random.Random) -> list[dict[str, Any]]:
    """A row's steps: tool steps (turns shared, None or absent; text on some), text and user steps, grouped
    ``tool_calls`` steps now and then; non-ASCII names, arguments and results."""
    names = ["get_order", "math.factorial", "lookup", "bad name!", "ünïcode_tool"]
    out: list[dict[str, Any]] = []
    for i in range(rng.randrange(7)):
        pick = rng.randrange(6)
        if pick < 3:
            step: dict[str, Any] = {"tool": rng.choice(names), "arguments": rng.choice([{}, None, _value(rng)]),
                                    "result": rng.choice([_value(rng), "plain text", None])}
            if rng.random() < 0.7:
                step["turn"] = rng.choice([i // 2, None, 0])
            if rng.random() < 0.3:
                step["text"] = rng.choice(TEXTS)
            out.append(step)
        elif pick == 3:
            out.append({"text": rng.choice(TEXTS)})
        elif pick == 4:
            out.append({"user": rng.choice(TEXTS)})
        else:
            out.append({"tool_calls": [{"tool": rng.choice(names), "arguments": {"x": i}, "result": "r"}
                                       for _ in range(1 + rng.randrange(2))], "text": rng.choice(["", "t"])})
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_chat_messages_of_plain_steps_are_the_copied_path(seed):
    from whileai_core.messages import _read_turns, _wire_names, chat_messages, tool_turns

    rng = random.Random(seed)
    for _ in range(100):
        steps = _steps(rng)
        proxied = [types.MappingProxyType(s) for s in steps]  # not plain dicts: tool_turns' copies
        system = rng.choice([None, "", "Be brief.", "Zoë"])
        if rng.random() < 0.5:
            _wire_names.clear()
        fast = chat_messages(system, "ask é", steps, "done")
        slow = chat_messages(system, "ask é", proxied, "done")
        assert json.dumps(fast) == json.dumps(slow)
        plain = [s for s in steps if "tool_calls" not in s]  # the fast grouping itself, against tool_turns
        assert json.dumps(_read_turns(plain)) == json.dumps(tool_turns(plain))


def test_wire_name_memo_answers_as_model_name():
    from whileai_core.messages import wire_name
    from whileai_core.tools import model_name

    for name in ["get_order", "math.factorial", "bad name!", "", "x" * 200, "ünï", "a.b.c"] * 2:
        try:
            want: Any = model_name(name) if name else name
        except Exception:  # noqa: BLE001 - a name no API takes comes back as it is
            want = name
        assert wire_name(name) == want and wire_name(name, memo=0) == want
    assert wire_name(None) is None and wire_name(3) == 3
