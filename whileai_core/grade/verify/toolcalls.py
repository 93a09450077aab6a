"""ToolCalls: the tool calls an agent made, checked against the expected ones (agentevals' four match modes).

The calls are read from the row the way rows store them (docs/rows.md): ``steps`` entries with a ``tool`` key
(``{"tool", "arguments", "result"}``), else the OpenAI ``tool_calls`` of the assistant ``messages`` (arguments
as a JSON string, decoded). Modes, as agentevals (langchain-ai) names them:

- ``strict``: the same calls in the same order, no more, no fewer;
- ``unordered``: the same calls in any order;
- ``subset``: the agent made only expected calls (made ⊆ expected; some may be left out);
- ``superset``: the agent made at least the expected calls (expected ⊆ made; extras allowed).

Each expected argument is an exact value (JSON equality), ``ANY`` (present, any value) or a predicate
``f(value) -> bool``; arguments an expected call does not list are refused unless ``allow_extra_args=True``; an
expected call without ``arguments`` accepts any arguments. The reason names the first missing or unexpected
call and the argument that differed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whileai_core.errors import InvalidArgument
from whileai_core.grade.verify.basic import ANY, match_value
from whileai_core.grade.verify.contract import Row, Verifier, VerifierError
from whileai_core.messages import parse_arguments
from whileai_core.messages import tool_calls as row_tool_calls
from whileai_core.tools import model_name

__all__ = ["ANY", "MODES", "ToolCalls", "tool_calls"]

MODES = ("strict", "unordered", "subset", "superset")
_SHOW = 80  # characters of a call shown in a reason


def _canon(name: Any) -> str:
    """A tool name as the model sees it (``tools.model_name``: dots become underscores), so a dotted reference
    such as BFCL's ``math.factorial`` matches a call recorded under the mapped name; a name no API accepts
    stays as written."""
    text = str(name)
    try:
        return model_name(text)
    except ValueError:
        return text


class ToolCall(dict):
    """One call: a dict ``{"name", "arguments"}`` that also reads as the SDK's ``ToolCall`` (``.name``,
    ``.arguments``, ``.id``: the call id when the row logged one, else None)."""

    @property
    def name(self) -> str:
        return self["name"]

    @property
    def arguments(self) -> Any:
        return self["arguments"]

    @property
    def id(self) -> str | None:
        return self.get("id")


def tool_calls(row: Row) -> list[ToolCall]:
    """The calls a row made, in order, as ``ToolCall`` dicts ``{"name", "arguments"}`` (``messages.tool_calls``:
    ``steps``, else the assistant messages' ``tool_calls``), names as the model sees them."""
    return [ToolCall(name=_canon(c["tool"]), arguments=parse_arguments(c.get("arguments")))
            for c in row_tool_calls(row)]


def _spec(item: Any, where: str) -> dict[str, Any]:
    """An expected call: ``{"tool"|"name": str, "arguments"|"args"?: dict}``, ``(name, args)`` or a bare name."""
    if isinstance(item, str):
        return {"name": _canon(item), "arguments": None}
    if isinstance(item, (tuple, list)) and item and isinstance(item[0], str) and len(item) <= 2:
        args = item[1] if len(item) == 2 else None
    elif isinstance(item, Mapping) and isinstance(item.get("tool", item.get("name")), str):
        args = item.get("arguments", item.get("args"))
        item = (item.get("tool", item.get("name")),)
    else:
        raise InvalidArgument(f"{where} must be a tool name, (name, arguments) or {{'tool': name, 'arguments': {{...}}}}; "
                         f"got {item!r:.80}")
    if args is not None and not isinstance(args, Mapping):
        raise InvalidArgument(f"{where}'s arguments must be a dict {{name: value, ANY or predicate}}; got {args!r:.80}")
    return {"name": _canon(item[0]), "arguments": None if args is None else dict(args)}


def _specs(expected: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(expected, Sequence) or isinstance(expected, (str, bytes)):
        raise InvalidArgument(f"{where} must be a list of expected calls; got {type(expected).__name__}")  # noqa: TRY004
    return [_spec(item, f"{where}[{i}]") for i, item in enumerate(expected)]


def _show_call(name: str, args: Any, hidden: bool = False) -> str:
    if hidden:
        return f"{name}(...)"
    if args is None:
        text = f"{name}(any arguments)"
    elif isinstance(args, Mapping):
        text = f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
    else:
        text = f"{name}({args!r})"
    return text if len(text) <= _SHOW else text[:_SHOW] + "...)"


class ToolCalls(Verifier):
    """1 when the agent's tool calls match the expected ones under ``mode`` (see the module docstring), else 0.

    ``expected``: a list of calls (``"name"``, ``("name", {args})`` or ``{"tool": name, "arguments": {...}}``);
    else ``field=``, else the row's ``privileged.expected_calls``, else its reference. The row's meta gets
    ``calls_made``, ``calls_expected`` and ``calls_matched``.

    Args:
        expected: the expected calls: names, ``(name, {args})`` pairs or ``{"tool", "arguments"}`` dicts.
        mode: how calls are matched (``"strict"`` by default; see the module docstring).
        allow_extra_args: accept arguments beyond the expected ones.
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        check = wai.ToolCalls([("get_order", {"order_id": "O1"})])
        scored = data.grade(judge=check)
        ```
    """

    ANY = ANY
    MODES = MODES

    def __init__(self, expected: Sequence[Any] | None = None, *, mode: str = "strict",
                 allow_extra_args: bool = False, field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "tool_calls")
        if mode not in MODES:
            raise InvalidArgument(f"mode= must be one of {MODES}; got {mode!r}")
        self.expected = None if expected is None else _specs(expected, "expected")
        self.mode, self.allow_extra_args = mode, bool(allow_extra_args)

    def reference(self, row: Row) -> tuple[Any, bool]:
        if self.expected is not None:
            return self.expected, False
        priv = row.get("privileged")
        if self.field is None and isinstance(priv, Mapping) and priv.get("expected_calls") is not None:
            return priv["expected_calls"], True
        return super().reference(row)

    # -- matching -----------------------------------------------------------------------------------

    def _mismatch(self, spec: dict[str, Any], call: dict[str, Any], hidden: bool) -> str | None:
        """Why ``call`` does not satisfy ``spec`` (None when it does)."""
        if call["name"] != spec["name"]:
            return f"is {call['name']}, expected {spec['name']}"
        want, got = spec["arguments"], call["arguments"]
        if want is None:
            return None
        if not isinstance(got, Mapping):
            return f"has arguments that are not a JSON object ({str(got)[:40]!r})"
        for arg, w in want.items():
            if arg not in got:
                return f"has no argument {arg!r}"
            ok, why = match_value(got[arg], w)
            if not ok:
                if hidden and not callable(w):
                    why = "differs from the expected value"
                return f"argument {arg!r} {why}"
        extra = [a for a in got if a not in want]
        if extra and not self.allow_extra_args:
            return f"has an unexpected argument {extra[0]!r} (allow_extra_args=False)"
        return None

    def _matching(self, specs: list[dict[str, Any]], made: list[dict[str, Any]], hidden: bool) -> dict[int, int]:
        """A maximum matching expected index -> made index (Kuhn's augmenting paths; lists are short)."""
        ok = [[self._mismatch(s, c, hidden) is None for c in made] for s in specs]
        owner: dict[int, int] = {}

        def augment(i: int, seen: set[int]) -> bool:
            for j in range(len(made)):
                if ok[i][j] and j not in seen:
                    seen.add(j)
                    if j not in owner or augment(owner[j], seen):
                        owner[j] = i
                        return True
            return False

        for i in range(len(specs)):
            augment(i, set())
        return {i: j for j, i in owner.items()}

    def _strict(self, specs: list[dict[str, Any]], made: list[dict[str, Any]], hidden: bool) -> tuple[int, str]:
        for i in range(max(len(specs), len(made))):
            if i >= len(made):
                return i, f"missing call #{i + 1}: {_show_call(specs[i]['name'], specs[i]['arguments'], hidden)}"
            if i >= len(specs):
                return i, f"unexpected call #{i + 1}: {_show_call(made[i]['name'], made[i]['arguments'])}"
            why = self._mismatch(specs[i], made[i], hidden)
            if why:
                name = made[i]["name"]
                return i, f"call #{i + 1} {why}" if name != specs[i]["name"] else f"call #{i + 1} {name}: {why}"
        return len(specs), ""

    def _missing_reason(self, spec: dict[str, Any], made: list[dict[str, Any]], hidden: bool) -> str:
        text = f"missing call: {_show_call(spec['name'], spec['arguments'], hidden)}"
        near = [c for c in made if c["name"] == spec["name"]]
        if near:
            text += f" (the agent's {spec['name']} call: {self._mismatch(spec, near[0], hidden)})"
        return text

    def _unexpected_reason(self, call: dict[str, Any], specs: list[dict[str, Any]], hidden: bool) -> str:
        text = f"unexpected call: {_show_call(call['name'], call['arguments'])}"
        near = [s for s in specs if s["name"] == call["name"]]
        if near:
            text += f" (against the expected {call['name']} call: {self._mismatch(near[0], call, hidden)})"
        return text

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        try:
            specs = reference if self.expected is not None else _specs(reference, "the row's expected calls")
        except ValueError as exc:
            raise VerifierError(f"{exc}; pass expected= or field=") from None
        hidden = self.expected is None and self.reference(row)[1]
        made: list[dict[str, Any]] = list(tool_calls(row))
        meta = {"calls_made": len(made), "calls_expected": len(specs)}
        if self.mode == "strict":
            n_ok, why = self._strict(specs, made, hidden)
            if not why:
                return {"reward": 1, "reason": f"tool calls: all {len(specs)} made in order", "calls_matched": n_ok,
                        **meta}
            return {"reward": 0, "reason": f"tool calls (strict): {why}", "calls_matched": n_ok, **meta}
        pairs = self._matching(specs, made, hidden)
        missing = [i for i in range(len(specs)) if i not in pairs]
        extra = [j for j in range(len(made)) if j not in set(pairs.values())]
        meta["calls_matched"] = len(pairs)
        need_all_expected = self.mode in ("unordered", "superset")
        no_extras = self.mode in ("unordered", "subset")
        if need_all_expected and missing:
            why = self._missing_reason(specs[missing[0]], made, hidden)
        elif no_extras and extra:
            why = self._unexpected_reason(made[extra[0]], specs, hidden)
        else:
            return {"reward": 1, "reason": f"tool calls ({self.mode}): {len(pairs)} of {len(specs)} expected "
                                           f"call(s) matched, {len(made)} made", **meta}
        return {"reward": 0, "reason": f"tool calls ({self.mode}): {why}", **meta}
