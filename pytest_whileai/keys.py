"""The keys under which the plugin's modules leave state on pytest objects (``config.stash``, ``item.stash``),
and the fixture names they look for, in one place so the fixture, the session and the hooks share them
without importing each other."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_whileai.markers import Thresholds

WAI_SESSION = pytest.StashKey[Any]()  # config: the WaiSession of this run
WAI_RESULT = pytest.StashKey[Any]()  # item: its scenario entry (a WaiResult's dict) once wai_eval.run/record finished
WAI_THRESHOLDS = pytest.StashKey[Thresholds]()  # item: the parsed @pytest.mark.wai thresholds
WAI_KEY = pytest.StashKey[str]()  # item: the scenario key it is stored and paired under
MARK_ERROR = pytest.StashKey[str]()  # item: a bad marker's message; the fixture fails the item with it at setup
WAI_ROUND = pytest.StashKey[int]()  # item: its round (0-based) under --wai-sequential
ENTRY_SENT = pytest.StashKey[bool]()  # item: its entry already rode on a TestReport (session.attach_entry)

# The fixture names that make a test a whileai test: ``wai_eval`` and its deprecated name ``wai``.
EVAL_FIXTURES = ("wai_eval", "wai")
