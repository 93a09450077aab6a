"""Fixtures shared by the training tests: a tiny offline model built from code, once per module."""

from __future__ import annotations

import pytest
import train_helpers as th


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    torch.set_num_threads(1)  # 2 shared cores: a second OpenMP thread spin-waits (reference pitfall P1)
    home = tmp_path_factory.mktemp("hf_home")
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HOME", str(home))
    mp.setenv("HF_DATASETS_CACHE", str(home / "datasets"))
    yield str(th.build_tiny_model(tmp_path_factory.mktemp("tiny-llama")))
    mp.undo()
