"""Answer checks: ``JSONSchema`` (the ``jsonschema`` package) and the JSON extraction it reads.
(``MathEqual`` is ``math_equal``: math-verify under our contract.)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from whileai_core.defaults import (
    MATH_ABS_TOL,
    MATH_REL_TOL,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.verify.answers import extract_answer, parse_number
from whileai_core.grade.verify.contract import Row, Verifier, VerifierError

__all__ = ["JSONSchema", "extract_json"]


def extract_json(text: str) -> Any:
    """The JSON value in a reply: a fenced ```json block, else the whole text, else the first ``{...}``/``[...]``.

    Raises ValueError when none parses.
    """
    if not isinstance(text, str):
        raise InvalidArgument("the reply is not text")  # noqa: TRY004 - callers treat every unparseable reply alike
    too_deep = ValueError("the JSON in the reply is nested deeper than Python's recursion limit")
    for m in re.finditer(r"```(?:json)?\s*\n(.*?)```", text, re.DOTALL):
        try:
            return json.loads(m.group(1))
        except json.JSONDecodeError:
            pass
        except RecursionError:  # a reply can be adversarial: fail it, never crash the grading run
            raise too_deep from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise too_deep from None
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[\[{]", text):
        try:
            return decoder.raw_decode(text, m.start())[0]
        except json.JSONDecodeError:
            continue
        except RecursionError:
            raise too_deep from None
    raise InvalidArgument("no JSON object or array found in the reply")


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def minimal_schema_error(schema: Mapping[str, Any], value: Any, path: tuple[Any, ...] = ()) -> tuple[str, str] | None:
    """The first violation of a JSON Schema subset (type, enum, const, required, properties,
    additionalProperties: false, items, minimum/maximum, min/maxLength, min/maxItems) as ``(path, message)``.

    The fallback when the ``jsonschema`` package is not installed; other keywords are not checked.
    """
    where = "/".join(map(str, path)) or "(root)"
    for check in (_value_error, _object_error, _array_error, _size_error):
        err = check(schema, value, path, where)
        if err:
            return err
    return None


_SchemaError = tuple[str, str] | None


def _value_error(schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], where: str) -> _SchemaError:
    """type, enum, const."""
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_JSON_TYPES.get(x, lambda v: True)(value) for x in types):
            return where, f"{json.dumps(value)[:60]} is not of type {' or '.join(map(repr, types))}"
    if "enum" in schema and value not in schema["enum"]:
        return where, f"{json.dumps(value)[:60]} is not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        return where, f"{json.dumps(value)[:60]} was expected to be {schema['const']!r}"
    return None


def _object_error(schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], where: str) -> _SchemaError:
    """required, properties (recursively), additionalProperties: false."""
    if not isinstance(value, dict):
        return None
    for key in schema.get("required", []):
        if key not in value:
            return where, f"{key!r} is a required property"
    props = schema.get("properties", {})
    for key, sub in props.items():
        if key in value and isinstance(sub, Mapping):
            err = minimal_schema_error(sub, value[key], (*path, key))
            if err:
                return err
    if schema.get("additionalProperties") is False:
        extra = [k for k in value if k not in props]
        if extra:
            return where, f"additional properties are not allowed ({extra[0]!r} was unexpected)"
    return None


def _array_error(schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], where: str) -> _SchemaError:
    """items (recursively), minItems/maxItems."""
    if not isinstance(value, list):
        return None
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            err = minimal_schema_error(items, item, (*path, i))
            if err:
                return err
    if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
        return where, f"array length {len(value)} is outside minItems/maxItems"
    return None


def _size_error(schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], where: str) -> _SchemaError:
    """minLength/maxLength of a string, minimum/maximum of a number."""
    if isinstance(value, str) and not (schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))):
        return where, f"string length {len(value)} is outside minLength/maxLength"
    if _JSON_TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            return where, f"{value} is less than the minimum of {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return where, f"{value} is greater than the maximum of {schema['maximum']}"
    return None


class JSONSchema(Verifier):
    """The reply's JSON validates against a JSON Schema (``jsonschema`` package, the schema's own draft).

    The schema comes from ``schema=``, else the row's reference. A bad schema is an error at construction.
    Without the ``jsonschema`` package (a dev extra) a documented subset is checked (``minimal_schema_error``)
    and the reason says "(minimal check)".
    """

    def __init__(self, schema: Mapping[str, Any] | None = None, *, field: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(field=field, name=name or "json_schema")
        if schema is not None:
            if not isinstance(schema, Mapping):
                raise InvalidArgumentType(f"schema= must be a JSON Schema dict; got {type(schema).__name__}")
            self._validator(schema, "schema=")
        self.schema = schema

    @staticmethod
    def _validator(schema: Any, where: str) -> tuple[Callable[[Any], tuple[str, str] | None], bool]:
        """(first_error(value) -> (path, message) | None, full): the package's validator, else the subset."""
        if isinstance(schema, str):
            try:
                schema = json.loads(schema)
            except json.JSONDecodeError:
                raise InvalidArgument(f"{where} is not valid JSON; pass the schema as a dict") from None
        if not isinstance(schema, Mapping):
            raise InvalidArgument(f"{where} must be a JSON Schema object; got {type(schema).__name__}")  # noqa: TRY004
        try:
            import jsonschema
        except ImportError:
            frozen = dict(schema)
            return (lambda value: minimal_schema_error(frozen, value)), False
        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            raise InvalidArgument(f"{where} is not a valid JSON Schema: {exc.message}") from None
        validator = cls(schema)

        def first_error(value: Any) -> tuple[str, str] | None:
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            if error is None:
                return None
            return "/".join(str(p) for p in error.absolute_path) or "(root)", error.message

        return first_error, True

    fixed_reference = "schema"

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        try:
            first_error, full = self._validator(reference, "the row's schema")
        except ValueError as exc:
            raise VerifierError(str(exc)) from None
        try:
            value = extract_json(candidate)
        except ValueError as exc:
            return 0, f"json: {exc}"
        note = "" if full else " (minimal check: install jsonschema for full validation)"
        error = first_error(value)
        if error is None:
            return 1, "json: valid against the schema" + note
        return 0, f"json: invalid at {error[0]}: {error[1]}" + note


