"""The SDK's import paths and shapes (issue 29): ``whileai.simulations``/``whileai.config`` over the same objects,
reports that index like the SDK's dicts, ``wai.verify``'s built-ins under the SDK's names."""

import subprocess
import sys
from pathlib import Path

import pytest

import whileai as wai

ROOT = Path(__file__).resolve().parents[1]


def test_simulations_namespace_runs_the_seed_quickstart(tmp_path):
    program = (ROOT / "examples" / "quickstart.py").read_text()
    assert "import whileai as wai\n" in program
    program = program.replace("import whileai as wai\n", "import whileai.simulations as wai\n", 1)
    proc = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("pass@1 0.67 [0.55..0.78] | pass^4 (pass_pow_k) 0.19")
    assert (tmp_path / "train.jsonl").stat().st_size > 0


def test_simulations_and_config_are_the_same_objects():
    import whileai.simulations as sims
    import whileai.simulations.defaults as sdk_defaults
    import whileai_core.defaults
    from whileai import config

    assert sims.simulate is wai.simulate and sims.select is wai.select and sims.pass_at is wai.pass_at
    assert sdk_defaults is whileai_core.defaults and sims.defaults is whileai_core.defaults
    assert config.configure is wai.configure and config.context is wai.context and config.settings is wai.settings
    assert set(sims.__all__) >= set(wai.__all__) and "simulate" in dir(sims)
    with pytest.raises(AttributeError, match=r"whileai\.simulations.*no_such_name"):
        _ = sims.no_such_name
