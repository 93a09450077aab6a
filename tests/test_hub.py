"""wai.hub.push and export(push_to=) against a loopback fake of the Hugging Face Hub's routes (issue 29 item 7):
create the repo, ask the upload mode, commit the files, each as huggingface_hub sends them."""

from __future__ import annotations

import json

import pytest
from fakehub import FakeHub

import whileai as wai

pytest.importorskip("huggingface_hub")


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    with FakeHub() as fake:
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", fake.server.url)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # the suite's offline flag: the
        # Hub here is the loopback fake, so letting huggingface_hub call it reaches nothing else
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield fake


def _rows():
    return [{"task_id": f"t{i}", "messages": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "hello"}], "reward": 1}
            for i in range(3)]


def test_push_a_file_rows_and_an_adapter_folder(hub, tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text('{"a": 1}\n')
    report = wai.hub.push(data, "me/orders", token="hf_test")
    assert report["repo_type"] == "dataset" and report["files"] == ["train.jsonl"] and report["private"] is True
    assert hub.repos["me/orders"]["private"] is True
    assert report["url"].endswith("/datasets/me/orders") and report["commit"]
    assert hub.repos["me/orders"]["files"] == {"train.jsonl": b'{"a": 1}\n'} and "Bearer hf_test" in hub.auth
    rows = wai.hub.push(_rows(), "me/rows", private=False)
    pushed = hub.repos["me/rows"]["files"]["train.jsonl"].decode().splitlines()
    assert rows["files"] == ["train.jsonl"] and [json.loads(x) for x in pushed] == _rows()
    assert hub.repos["me/rows"]["private"] is False
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"\0weights")
    out = wai.hub.push(adapter, "me/lora")
    assert out["repo_type"] == "model" and hub.repos["me/lora"]["type"] == "model"
    assert set(hub.repos["me/lora"]["files"]) == {"adapter_config.json", "adapter_model.safetensors"}


def test_export_push_to_pushes_the_written_file(hub, tmp_path):
    report = wai.export(_rows(), tmp_path / "sft.jsonl", push_to="me/sft")
    assert report["hub"]["repo_id"] == "me/sft" and report["hub"]["files"] == ["sft.jsonl"]
    assert hub.repos["me/sft"]["files"]["sft.jsonl"] == (tmp_path / "sft.jsonl").read_bytes()
    with pytest.raises(ValueError, match="push_to needs an output path"):
        wai.export(_rows(), None, push_to="me/sft")


def test_errors_come_before_any_call(hub, tmp_path):
    with pytest.raises(ValueError, match="namespace/name"):
        wai.hub.push(_rows(), "orders")
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        wai.hub.push(tmp_path / "nope.jsonl", "me/orders")
    with pytest.raises(TypeError, match="a file, a folder or a list of rows"):
        wai.hub.push(42, "me/orders")
    assert hub.auth == []  # nothing reached the Hub
