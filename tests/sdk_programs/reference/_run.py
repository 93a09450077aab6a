"""Run every program in this folder in ONE process (each in a fresh temp dir, offline) and print one JSON line
per program, ``{"name", "ok", "error"}``, then the share that ran as documented.

    python tests/sdk_programs/reference/_run.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_all() -> list[dict[str, object]]:
    for var in ("OPENAI_API_KEY", "WHILEAI_AGENT", "WHILEAI_API_KEY", "HF_TOKEN"):  # offline: no key, no model
        os.environ.pop(var, None)
    sys.path.insert(0, str(HERE.parents[1]))  # tests/: the loopback fakes
    from fakehub import FakeHub

    with FakeHub() as hub:  # the Hugging Face Hub's routes on loopback (wai.hub, export(push_to=))
        os.environ["HF_ENDPOINT"] = hub.server.url
        with contextlib.suppress(ImportError):
            import huggingface_hub.constants

            huggingface_hub.constants.ENDPOINT = hub.server.url
            huggingface_hub.constants.HF_HUB_OFFLINE = False  # the Hub is the loopback fake: nothing else is reached
        return _run_programs()


def _run_programs() -> list[dict[str, object]]:
    results = []
    start = os.getcwd()
    for path in sorted(HERE.glob("[!_]*.py")):
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            error = None
            try:
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    runpy.run_path(str(path), run_name="__main__")
            except BaseException as exc:  # noqa: BLE001 - a program's failure is the measurement
                error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            finally:
                os.chdir(start)
                sys.path[:] = [p for p in sys.path if p not in (".", tmp)]
                sys.modules.pop("my_judge", None)
        results.append({"name": path.stem, "ok": error is None, "error": error})
    return results


if __name__ == "__main__":
    out = run_all()
    for r in out:
        print(json.dumps(r))
    ok = sum(r["ok"] for r in out)
    print(f"{ok} of {len(out)} run as documented ({ok / len(out):.0%})")
