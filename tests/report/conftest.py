"""Report tests: one headless Chromium per module (``browser``), and the example project copied for pytester."""

from __future__ import annotations

from collections.abc import Iterator

# loaded before any in-process pytester run (pytester restores sys.modules; numpy cannot be imported twice)
import numpy  # noqa: F401
import pytest
import scipy.stats  # noqa: F401
from wai_browser import Chromium, find_chromium

import whileai_core.gate.compare
import whileai_core.measure.delta
import whileai_core.measure.pass_at
import whileai_core.measure.power
import whileai_core.measure.between_runs
import whileai_core.simulate.agents
import whileai_core.simulate.run  # noqa: F401



@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it as root): the HTML "
                    "report's browser checks did not run")
    chrome = Chromium(binary)
    try:
        yield chrome
    finally:
        chrome.close()
