"""Serve: a tiny local checkpoint behind ``transformers serve`` on 127.0.0.1, played by ``simulate`` and ``prove``.

The checkpoint is the ~0.16M-parameter Llama of tests/train_helpers.py, built in a temp dir (nothing is
downloaded). One server is shared by the module; the lifecycle tests start their own and check the process is
gone and the port closed afterwards. Each server is bounded by its start timeout and stopped by the test.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import train_helpers as th

import whileai as wai
from whileai_core.serve import engines
from whileai_core.serve.checkpoint import prepare
from whileai_core.serve.server import free_port

pytestmark = [
    pytest.mark.train,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
pytest.importorskip("torch")
if engines.missing("transformers"):
    pytest.skip("transformers serve needs transformers[serving] (fastapi, uvicorn)", allow_module_level=True)

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # a shared 2-core box (trl-offline-training.md P1)
START_S = 120.0  # a bound on each start in this module (the tiny model answers in about 10 s here)


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie left for its parent counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return th.build_tiny_model(tmp_path_factory.mktemp("serve") / "tiny", init_std=0.5)  # replies vary by prompt


@pytest.fixture(scope="module")
def server(tiny):
    with wai.serve(tiny, engine="transformers", env=ONE_THREAD, timeout_s=START_S) as s:
        yield s
    assert not s.alive


def test_served_model_answers_simulate_through_an_endpoint(server, tiny):
    assert isinstance(server.endpoint, wai.Endpoint)
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
    assert server.model == str(tiny.resolve())
    from whileai_core.simulate.model_agent import as_agent

    agent = as_agent(server.endpoint, tools=[get_order], system_prompt=None, max_tokens=8, cache=False)
    data = wai.simulate(agent, tools=[get_order], system_prompt="Help customers with orders.", simulator=False,
                        repeats=2, budget=4, max_turns=1)
    assert len(data.rows) == 4
    for row in data.rows:
        assert row["status"] != "infra_error", row.get("error")
        usage = row["agent_extra"]["usage"]
        assert usage["calls"] == 1 and 0 < usage["output_tokens"] <= 8 and row["finish_reason"] == "length"
    direct = wai.simulate(server.endpoint, tools=[get_order], system_prompt="Help.", simulator=False, repeats=1,
                          budget=1, max_turns=1)  # the Endpoint itself is an agent (1024-token replies: one row)
    assert direct.rows[0]["status"] != "infra_error", direct.rows[0].get("error")
    assert direct.rows[0]["agent_extra"]["usage"]["output_tokens"] > 0


def test_prove_pairs_the_served_endpoint_with_the_same_checkpoint_in_process(server, tiny):
    holdout = [{"task_id": f"t{i}", "prompt": f"read /data/file{i}.txt", "system_prompt": "You are an agent."}
               for i in range(3)]
    judge = lambda row: {"reward": int(bool(row["final_text"].strip()))}
    report = wai.prove(str(tiny), server.endpoint, holdout, judge, max_new_tokens=6)
    assert report.n_tasks == 3
    # same weights, same greedy decoding, same system + user messages: the served arm says what the local arm says
    before = {r["task_id"]: r["final_text"].strip() for r in report.before}
    after = {r["task_id"]: r["final_text"].strip() for r in report.after}
    assert after == before and any(before.values())
    assert report.delta.delta == 0.0 and report.delta.n_paired == 3


def test_close_stops_the_process_and_frees_the_port(server):  # the module's last test on the shared server
    pid, port, log = server.pid, server.port, Path(server.log_path)
    assert port_open(port) and server.alive and log.exists()
    server.close()
    assert gone(pid) and not port_open(port) and not server.alive
    assert not log.exists()  # the temp dir went with it
    server.close()  # twice is fine


def test_a_server_that_dies_at_start_shows_its_log_tail(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(wai.ServeError, match="exited with status") as info:
        wai.serve(broken, engine="transformers", env=ONE_THREAD, timeout_s=START_S)
    assert re.search(r"\w+(Error|Exception)\b", info.value.log_tail)  # the engine's own words
    assert info.value.log_tail in str(info.value) and "last lines of the server log" in str(info.value)
    assert info.value.returncode not in (None, 0)


def test_a_start_timeout_stops_the_process(tiny):
    port = free_port()
    with pytest.raises(wai.ServeError, match="within timeout_s=0.5"):
        wai.serve(tiny, engine="transformers", port=port, env=ONE_THREAD, timeout_s=0.5)
    assert servers_on(port) == [] and not port_open(port)


def servers_on(port: int) -> list[int]:
    """Live processes whose command line serves ``port``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--port" in argv and str(port).encode() in argv and not gone(int(pid)):
            found.append(int(pid))
    return found


def test_cli_prints_the_url_and_its_server_never_outlives_a_killed_caller(tiny):
    port = free_port()
    cmd = [sys.executable, "-m", "whileai_core.cli", "serve", str(tiny), "--engine", "transformers", "--port",
           str(port), "--timeout", str(START_S)]
    cli = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, **ONE_THREAD})
    try:
        url = cli.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/v1", cli.stderr.read() if cli.poll() is not None else url
        assert port_open(port) and servers_on(port)
        # killed outright (no atexit, no finally, no signal handler): the server dies with it (PR_SET_PDEATHSIG)
        cli.kill()
        cli.wait(timeout=30)
        deadline = time.monotonic() + 60  # a wait, not a verdict on speed: a loaded box reaps slower
        while (servers_on(port) or port_open(port)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert servers_on(port) == [] and not port_open(port)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(timeout=30)


def test_vllm_absent_is_a_clear_error_naming_the_install(tiny):
    if not engines.missing("vllm"):
        pytest.skip("vLLM is installed here")
    with pytest.raises(wai.ServeError, match=r"pip install vllm"):
        wai.serve(tiny, engine="vllm")
    if not engines.gpu_present():
        assert engines.choose("auto") == "transformers"


def test_a_lora_adapter_is_served_on_its_base_by_vllm_and_merged_for_transformers(tiny, tmp_path):
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(f'{{"base_model_name_or_path": "{tiny}", "r": 64}}')
    plan = prepare(adapter, "vllm", tmp_path)
    assert plan.model_dir == str(tiny.resolve()) and plan.adapter == str(adapter.resolve())
    argv = engines.command("vllm", plan.model_dir, host="127.0.0.1", port=8000, adapter=plan.adapter,
                           adapter_rank=plan.adapter_rank).argv
    assert argv[argv.index("--lora-modules") + 1] == f"adapter={adapter.resolve()}"
    assert argv[argv.index("--max-lora-rank") + 1] == "64" and "--enable-lora" in argv
    if importlib.util.find_spec("peft") is None:
        with pytest.raises(wai.ServeError, match="pip install peft"):
            wai.serve(adapter, engine="transformers")
    (adapter / "adapter_config.json").write_text('{"base_model_name_or_path": "Org/hub-model"}')
    with pytest.raises(wai.InvalidArgument, match="base_model_name_or_path='Org/hub-model'"):
        wai.serve(adapter, engine="transformers")


def test_arguments_are_checked_before_anything_starts(tiny, tmp_path):
    with pytest.raises(wai.InvalidArgument, match="engine="):
        wai.serve(tiny, engine="tgi")
    with pytest.raises(wai.InvalidArgument, match="not a local checkpoint directory"):
        wai.serve(tmp_path / "nothing", engine="transformers")
    with pytest.raises(wai.InvalidArgumentType, match="save_pretrained"):
        wai.serve(object(), engine="transformers")
    with pytest.warns(UserWarning, match="beyond loopback"), pytest.raises(wai.InvalidArgument):
        wai.serve(tmp_path / "nothing", engine="transformers", host="0.0.0.0")


def test_a_port_in_use_is_refused_before_anything_starts(tiny):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(wai.ServeError, match=f"port {busy.getsockname()[1]} on 127.0.0.1 is already in use"):
            wai.serve(tiny, engine="transformers", port=busy.getsockname()[1])


def test_a_lora_adapter_served_by_transformers_answers_as_its_merged_model(tiny, tmp_path):
    """Runs where peft is installed (it is not in the train extra); checked by hand with peft 0.21.2."""
    pytest.importorskip("peft")
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(1)
    lora = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny),
                          LoraConfig(r=4, lora_alpha=64, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    lora.save_pretrained(tmp_path / "adapter")
    AutoTokenizer.from_pretrained(tiny).save_pretrained(tmp_path / "adapter")
    lora.merge_and_unload().save_pretrained(tmp_path / "merged")
    AutoTokenizer.from_pretrained(tiny).save_pretrained(tmp_path / "merged")
    messages = [{"role": "user", "content": "where is order 42"}]
    merged = wai.LocalModel(str(tmp_path / "merged"), max_new_tokens=12).generate(messages)
    assert merged.strip() != wai.LocalModel(str(tiny), max_new_tokens=12).generate(messages).strip()
    with wai.serve(tmp_path / "adapter", engine="transformers", env=ONE_THREAD, timeout_s=START_S) as s:
        assert any("merged into its base" in note for note in s.notes)
        served = s.endpoint.complete(messages, temperature=0, max_tokens=12)
    assert served.text.strip() == merged.strip()


def test_cli_refuses_a_path_that_is_not_a_checkpoint(tmp_path):
    done = subprocess.run([sys.executable, "-m", "whileai_core.cli", "serve", str(tmp_path / "nothing"), "--engine",
                           "transformers"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "whileai serve: serve():" in done.stderr and "not a local checkpoint directory" in done.stderr
