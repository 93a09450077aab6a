"""Fixtures shared across the suite."""

from __future__ import annotations

import pytest
from fakeserver import FakeServer


@pytest.fixture()
def srv():
    """A loopback OpenAI-compatible / Anthropic-shaped server on 127.0.0.1 (tests/fakeserver.py), stopped after."""
    with FakeServer() as s:
        yield s
