"""Model strings: ``spec_problem`` (why a value is not a usable model, importing no HTTP client) and
``resolve_model`` (a backend object from ``"openai:gpt-4.1-mini"``, ``"vllm:<model>@<url>"``, ...).
"""

from __future__ import annotations

from typing import Any

from whileai_core.errors import InvalidArgument
from whileai_core.models.anthropic import Anthropic
from whileai_core.models.endpoint import _ENDPOINT_PROVIDERS, Endpoint
from whileai_core.models.ollama import Ollama
from whileai_core.models.openai import OpenAI
from whileai_core.models.protocol import _is_backend

#: every spec-string form resolve_model() accepts, for error messages.
SPEC_FORMS = (
    "openai:<model>",
    "anthropic:<model>",
    "vllm:<model>@<url>  (also sglang:, tgi:, endpoint:)",
    "ollama:<model>",
)
_PROVIDERS = ("openai", "anthropic", "ollama", *_ENDPOINT_PROVIDERS)


def _forms() -> str:
    return "; ".join(SPEC_FORMS)


def spec_problem(value: Any, *, role: str = "agent") -> str | None:
    """Why ``value`` is not a usable model spec for ``role`` (None when it is). Imports no httpx."""
    if _is_backend(value):
        return None
    if not isinstance(value, str):
        return f"{role}= takes a model string ({_forms()}) or a backend object; got {type(value).__name__}"
    s = value.strip()
    if not s:
        return f"{role}='' is empty; leave it unset instead, or name a model such as {role}='openai:gpt-4.1-mini'"
    if s.startswith(("http://", "https://")):
        return f"{role}={s!r} is a bare URL; name the model too: {role}='vllm:<model>@{s}'"
    provider, sep, rest = s.partition(":")
    if not sep:
        head, slash, tail = s.partition("/")
        if slash and head.lower() in _PROVIDERS:
            fix = f"vllm:{tail}@<url>" if head.lower() in _ENDPOINT_PROVIDERS else f"{head.lower()}:{tail}"
            return f"{role}={s!r} uses a slash; whileai writes the provider with a colon: {role}={fix!r}"
        return f"{role}={s!r} names no provider; write {role}='openai:{s}' (forms: {_forms()})"
    p = provider.lower()
    if p not in _PROVIDERS:
        return f"{role}={s!r}: {provider!r} is not a provider whileai knows; forms: {_forms()}"
    if not rest.strip():
        return f"{role}={s!r} names no model after '{provider}:'; e.g. {role}='{p}:<model>'"
    if p in _ENDPOINT_PROVIDERS:
        at = rest.find("@http")
        if at <= 0:
            return f"{role}={s!r} needs the server URL: {role}='{p}:{rest.split('@')[0]}@http://host:port/v1'"
    return None


def resolve_model(model: Any, *, role: str = "agent") -> Any:
    """A backend object from a spec string (``"openai:gpt-4.1-mini"``, ``"vllm:<model>@<url>"``, ...);
    a backend object is returned as it is. Bad specs raise ``ValueError`` naming ``role=`` and the fix."""
    problem = spec_problem(model, role=role)
    if problem:
        raise InvalidArgument(problem)
    if _is_backend(model):
        return model
    s = model.strip()
    provider, _, rest = s.partition(":")
    p = provider.lower()
    if p == "openai":
        return OpenAI(rest)
    if p == "anthropic":
        return Anthropic(rest)
    if p == "ollama":
        return Ollama(rest)
    at = rest.find("@http")
    return Endpoint(rest[:at], url=rest[at + 1:], provider=p)


__all__ = ['SPEC_FORMS', 'resolve_model', 'spec_problem']
