"""Plain data across the sandbox wall: JSON values with a type tag, never pickles, never objects with methods.

``encode`` turns a Python value into nested lists ``[tag, payload]`` (tags: ``N`` None, ``b`` bool, ``i`` int as
decimal text, ``f`` float as ``repr`` text, ``c`` complex, ``s`` str, ``y`` bytes as hex, ``l`` list, ``t``
tuple, ``S`` set, ``F`` frozenset, ``d`` dict as key/value pairs, ``g`` an iterator/generator's items);
subclasses of the built-ins (an int subclass, ``Counter``, a namedtuple) cross as their built-in value, read
with the base type's own methods; a value of any other type raises ``Unplain`` naming it. ``decode`` rebuilds only built-in values from that form and
raises ``Unplain`` on anything else (an unknown tag, a malformed payload, too deep, too many nodes), so what a
candidate returns can never carry an ``__eq__`` of its own into the process that compares it.

Both functions are self-contained (no module globals): CodeExec embeds their source in the sandbox's program.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Unplain", "decode", "encode"]


class Unplain(ValueError):
    """A value that is not plain data (or a malformed encoding of one)."""


def encode(value: Any, max_nodes: int = 1_000_000, max_depth: int = 200, max_items: int = 100_000,
           hook: Any = None) -> Any:
    """``value`` as tagged JSON-ready lists; ``Unplain`` for anything but built-in data (and bounded in size).
    ``hook(v)``, when given, encodes what is not plain data instead (CodeExec's isolated mode: a handle)."""
    count = [0]

    def enc(v: Any, depth: int) -> Any:
        count[0] += 1
        if count[0] > max_nodes or depth > max_depth:
            raise Unplain("a value too large or too deeply nested to return")
        t = type(v)
        if v is None:
            return ["N", 0]
        if t is bool:
            return ["b", bool(v)]
        if isinstance(v, bool):
            return ["b", bool.__bool__(v)]
        if isinstance(v, int):
            return ["i", int.__repr__(int(int.__index__(v)))]
        if isinstance(v, float):
            return ["f", float.__repr__(float.__float__(v))]
        if isinstance(v, complex):
            return ["c", [float.__repr__(float(v.real)), float.__repr__(float(v.imag))]]
        if isinstance(v, str):
            return ["s", str.__str__(v)]
        if isinstance(v, (bytes, bytearray)):
            return ["y", bytes(v).hex()]
        if t is list or t is tuple or t is set or t is frozenset:
            tag = "l" if t is list else "t" if t is tuple else "S" if t is set else "F"
            return [tag, [enc(x, depth + 1) for x in t.__iter__(v)]]
        if t is dict:
            return ["d", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in dict.items(v)]]
        if isinstance(v, (list, tuple, set, frozenset, dict)):
            # a subclass (Counter, defaultdict, OrderedDict, a namedtuple): its built-in contents, read with the
            # base type's own methods, never its class's (so no __eq__ or __iter__ of its own crosses); with a
            # hook, the candidate's own subclasses stay objects (isolated mode's handles keep their methods)
            if hook is not None and getattr(t, "__module__", "") == "solution":
                return hook(v)
            if isinstance(v, dict):
                return ["d", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in dict.items(v)]]
            base: Any = list if isinstance(v, list) else tuple if isinstance(v, tuple) else \
                set if isinstance(v, set) else frozenset
            tag = "l" if base is list else "t" if base is tuple else "S" if base is set else "F"
            return [tag, [enc(x, depth + 1) for x in base.__iter__(v)]]
        if t.__name__ in ("generator", "map", "filter", "zip", "enumerate", "range", "reversed",
                          "list_iterator", "tuple_iterator", "dict_keys", "dict_values", "dict_items",
                          "set_iterator", "str_iterator", "range_iterator", "itertools.chain"):
            if hook is not None:
                return hook(v)  # isolated mode: iterated lazily through the handle (an endless generator works)
            items = []
            for x in v:
                items.append(enc(x, depth + 1))
                if len(items) > max_items:
                    raise Unplain("an iterator with too many items")
            return ["g", items]
        if hook is not None:
            return hook(v)
        raise Unplain(f"a {getattr(t, '__name__', 'value')}")

    return enc(value, 0)


def decode(data: Any, max_nodes: int = 1_000_000, max_depth: int = 200, max_digits: int = 4300,
           hook: Any = None) -> Any:
    """The built-in value ``data`` (from ``encode``) stands for; ``Unplain`` on anything malformed. ``hook(tag,
    payload)``, when given, decodes the tags ``H`` and ``C`` (isolated mode's handles; it raises ``Unplain`` for
    what it does not know)."""
    count = [0]
    floats = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}

    def dec(x: Any, depth: int) -> Any:
        count[0] += 1
        if count[0] > max_nodes or depth > max_depth:
            raise Unplain("too large or too deeply nested")
        if type(x) is not list or len(x) != 2 or type(x[0]) is not str:
            raise Unplain("not a tagged value")
        tag, p = x
        if tag == "N":
            return None
        if tag == "b" and type(p) is bool:
            return p
        if tag == "i" and type(p) is str and 0 < len(p) <= max_digits + 1:
            if not (p.isdigit() or (p[0] == "-" and p[1:].isdigit())) or not p.isascii():
                raise Unplain("a malformed int")
            return int(p)
        if tag == "f" and type(p) is str and len(p) <= 32:
            if p in floats:
                return floats[p]
            try:
                return float(p)
            except ValueError:
                raise Unplain("a malformed float") from None
        if tag == "c" and type(p) is list and len(p) == 2:
            return complex(dec(["f", p[0]], depth + 1), dec(["f", p[1]], depth + 1))
        if tag == "s" and type(p) is str:
            return p
        if tag == "y" and type(p) is str:
            try:
                return bytes.fromhex(p)
            except ValueError:
                raise Unplain("malformed bytes") from None
        if tag in ("l", "t", "S", "F", "g") and type(p) is list:
            items = [dec(v, depth + 1) for v in p]
            try:
                if tag == "l":
                    return items
                if tag == "g":
                    return iter(items)
                return tuple(items) if tag == "t" else set(items) if tag == "S" else frozenset(items)
            except TypeError:
                raise Unplain("an unhashable set member") from None
        if tag == "d" and type(p) is list:
            out = {}
            for kv in p:
                if type(kv) is not list or len(kv) != 2:
                    raise Unplain("a malformed dict item")
                try:
                    out[dec(kv[0], depth + 1)] = dec(kv[1], depth + 1)
                except TypeError:
                    raise Unplain("an unhashable dict key") from None
            return out
        if hook is not None and tag in ("H", "C"):
            return hook(tag, p)
        raise Unplain(f"an unknown or malformed tag {str(tag)[:10]!r}")

    return dec(data, 0)
