"""Session fixtures: real result files written by each framework running offline (interop_runs.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from interop_runs import (
    deepeval_python,
    deepeval_runs_in,
    inspect_runs_in,
    lm_eval_runs_in,
    promptfoo_runs_in,
)


@pytest.fixture(scope="session")
def inspect_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed: pip install 'pytest-whileai[interop]'")
    return inspect_runs_in(tmp_path_factory.mktemp("inspect"))

@pytest.fixture(scope="session")
def lm_eval_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("lm_eval", reason="lm-eval is not installed: pip install 'pytest-whileai[interop]'")
    root = tmp_path_factory.mktemp("lm_eval")
    old = {k: os.environ.get(k) for k in ("HF_DATASETS_OFFLINE", "HF_DATASETS_CACHE")}
    os.environ.update(HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(root / "hf-cache"))
    try:
        return lm_eval_runs_in(root)
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)



@pytest.fixture(scope="session")
def promptfoo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import shutil

    if shutil.which("promptfoo") is None:
        pytest.skip("promptfoo is not installed (node + npm install -g promptfoo; .ci/run installs it)")
    return promptfoo_runs_in(tmp_path_factory.mktemp("promptfoo"))


@pytest.fixture(scope="session")
def deepeval_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    python = deepeval_python()
    if python is None:
        pytest.skip("deepeval is not installed here and WHILEAI_DEEPEVAL_PYTHON names no interpreter that has it "
                    "(.ci/run installs it in its own venv: it pins click<8.4, huggingface_hub needs click>=8.4.2)")
    return deepeval_runs_in(tmp_path_factory.mktemp("deepeval"), python)
