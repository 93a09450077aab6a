"""whileai.platform against a loopback fake of the While service's routes (tests/hosted/fake_platform.py).

Checked against that fake, not the live service: the routes, headers and error shapes are those of the SDK
reference (§5.5), and the fake enforces them.
"""

from __future__ import annotations

import logging
import os
import stat
import traceback

import pytest
from fake_platform import KEY, FakePlatform

import whileai as wai
from whileai import platform


def _rows(n_tasks: int, *, mixed: bool) -> list[dict]:
    """4 rollouts per task; mixed: rewards alternate inside each task, else every task is unanimous."""
    rows = []
    for i in range(n_tasks):
        for j in range(4):
            reward = float((i + j) % 2) if mixed else float(i % 2)
            rows.append({"task_id": f"t{i}", "rollout_index": j, "prompt": f"please refund order {1000 + i}",
                         "final_text": f"reply {i}.{j}: refund handled.", "reward": reward})
    return rows


@pytest.fixture()
def fake(tmp_path, monkeypatch):
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "home"))
    for name in ("WHILEAI_API_KEY", "WHILEAI_DELEGATED_CREDENTIAL"):
        monkeypatch.delenv(name, raising=False)
    with FakePlatform() as f:
        monkeypatch.setenv("WHILEAI_API_URL", f.url)
        yield f


@pytest.fixture()
def keyed(fake, monkeypatch):
    monkeypatch.setenv("WHILEAI_API_KEY", KEY)
    return fake


def _paths(fake, method: str) -> list[str]:
    return [r["path"] for r in fake.requests if r["method"] == method]


# ---- login ----------------------------------------------------------------------------------------
def test_device_login_waits_through_pending_and_slow_down_then_saves_the_key_0600(fake, capsys):
    fake.token_script = ["authorization_pending", "slow_down", "ok"]
    result = platform.login("laptop", slow_down_s=0.01)
    out = capsys.readouterr().out
    assert "WDJB-MJHT" in out and fake.url + "/device" in out  # the user code and the verification URI
    assert result.polls == 3 and result.interval_s == pytest.approx(0.01)  # slow_down raised the interval 0 -> 0.01
    assert stat.S_IMODE(os.stat(result.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(result.path.parent).st_mode) == 0o700
    assert KEY not in out and KEY not in str(result) and KEY not in repr(result)
    bodies = [r["body"] for r in fake.requests if r["path"] == "/device/token"]
    assert {b["device_code"] for b in bodies} == {"dev-123"} and len(bodies) == 3
    # the saved key is found by the next call (last in the lookup order)
    assert platform.account() == {"email": "dev@example.com"}
    assert platform.logout() is True and not result.path.exists()


def test_login_replaces_a_wider_credentials_file_with_a_0600_one(fake):
    path = platform.credentials_path()
    path.parent.mkdir(parents=True)
    path.write_text('{"api_key": "zp_old"}')
    os.chmod(path, 0o644)
    platform.login()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert platform.Client().key_source == str(path) and "zp_old" not in path.read_text()


@pytest.mark.parametrize("code, words", [("access_denied", "denied"), ("expired_token", "expired")])
def test_device_login_denied_or_expired_is_a_login_error_and_saves_nothing(fake, code, words):
    fake.token_script = ["authorization_pending", code]
    with pytest.raises(wai.LoginError, match=words) as info:
        platform.login()
    assert info.value.code == code and info.value.status == 400
    assert isinstance(info.value, wai.PlatformError) and isinstance(info.value, RuntimeError)
    assert not platform.credentials_path().exists()


def test_key_lookup_order_explicit_then_delegated_then_env_then_file(fake, monkeypatch):
    from whileai_core.platform.credentials import save_credentials

    save_credentials({"api_key": "zp_from_file"})
    assert platform.Client().key_source == str(platform.credentials_path())
    monkeypatch.setenv("WHILEAI_API_KEY", "zp_from_env")
    assert platform.Client().key_source == "WHILEAI_API_KEY"
    monkeypatch.setenv("WHILEAI_DELEGATED_CREDENTIAL", "zp_dc_delegated")
    assert platform.Client().key_source == "WHILEAI_DELEGATED_CREDENTIAL"
    c = platform.Client("zp_explicit")
    assert c.key_source == "api_key=" and "zp_explicit" not in repr(c) and "zp_dc_delegated" not in repr(c)


def test_no_key_fails_before_any_request_naming_login(fake):
    with pytest.raises(wai.PlatformError, match="whileai login") as info:
        platform.datasets()
    assert info.value.status is None and fake.requests == []


# ---- datasets -------------------------------------------------------------------------------------
def test_push_with_holdout_uploads_two_linked_datasets_split_by_task(keyed):
    rows = _rows(10, mixed=True)
    ds = platform.push(rows, "support", holdout=0.3)
    assert ds.holdout is not None and ds.n_rows + ds.holdout.n_rows == len(rows)
    assert ds.n_tasks == 7 and ds.holdout.n_tasks == 3
    created = [r["body"] for r in keyed.requests if (r["method"], r["path"]) == ("POST", "/datasets")]
    assert created[0]["purpose"] == "train" and created[0]["parentDatasetId"] is None
    assert created[1]["purpose"] == "holdout" and created[1]["parentDatasetId"] == ds.id
    uploads = [r for r in keyed.requests if r["method"] == "PUT"]
    assert len(uploads) == 2 and all("x-api-key" not in r["headers"] for r in uploads)  # the key stays home
    assert _paths(keyed, "POST").count(f"/datasets/{ds.id}/finalize") == 1
    train_rows, held_rows = platform.pull(ds), platform.pull(ds.holdout.id)
    assert {r["task_id"] for r in train_rows}.isdisjoint({r["task_id"] for r in held_rows})  # never inside a group
    assert sorted(map(str, [*train_rows, *held_rows])) == sorted(map(str, rows))
    assert [d["id"] for d in platform.datasets()] == [ds.id, ds.holdout.id]
    assert "support" in str(ds) and "holdout" in str(ds)


def test_push_refuses_a_bad_purpose_before_any_request(keyed):
    with pytest.raises(wai.InvalidArgument, match="purpose"):
        platform.push(_rows(2, mixed=True), "x", purpose="training")
    assert keyed.requests == []


# ---- train, runs, serve ---------------------------------------------------------------------------
def test_train_preflight_refuses_a_dataset_with_no_mixed_groups(keyed):
    ds = platform.push(_rows(6, mixed=False), "unanimous")
    with pytest.raises(wai.TrainingSelectionError, match="no.*mixed|none") as info:
        platform.train(ds, method="grpo")
    assert info.value.report["unanimous"] == {"all_pass": 3, "all_fail": 3}  # select's own report
    assert f"/datasets/{ds.id}/train" not in _paths(keyed, "POST")  # the platform was never asked
    with pytest.warns(UserWarning, match="pre-flight"):
        run = platform.train(ds, method="grpo", check="warn")
    assert run.status == "queued"


def test_sft_preflight_refuses_failing_rows(keyed):
    ds = platform.push(_rows(4, mixed=True), "mixed")
    with pytest.raises(wai.TrainingSelectionError, match="sft would imitate 8"):
        platform.train(ds, method="sft")


def test_train_waits_for_the_run_then_serves_it_as_an_endpoint(keyed):
    ds = platform.push(_rows(6, mixed=True), "mixed", holdout=0.34)
    with pytest.warns(UserWarning, match="mixed task"):  # 4 mixed tasks < 32: warns, trains
        run = platform.train(ds, method="grpo", steps=50, learning_rate=1e-5, wait=True, poll=0.001)
    assert run.status == "succeeded" and run.adapter == f"adapters/{run.id}"
    sent = keyed.runs[run.id]["request"]
    assert sent["method"] == "grpo" and sent["steps"] == 50 and sent["lr"] == 1e-5
    assert sent["holdoutId"] == ds.holdout.id and sent["maskTruncated"] is True
    assert [r.id for r in platform.runs()] == [run.id] and "succeeded" in str(run)
    model = platform.serve("Support-Bot", run)
    assert model.name == "support-bot" and keyed.models["support-bot"]["adapter"] == run.adapter
    endpoint = model.as_endpoint()
    assert isinstance(endpoint, wai.Endpoint) and endpoint.url == model.endpoint


def test_serve_refuses_an_unfinished_run(keyed):
    ds = platform.push(_rows(6, mixed=True), "mixed")
    run = platform.train(ds, method="grpo", min_mixed_tasks=1)
    with pytest.raises(wai.InvalidArgument, match="succeeded run"):
        platform.serve("bot", run.id)  # the first poll finds it running


# ---- errors and retries ---------------------------------------------------------------------------
def test_401_names_the_status_and_never_the_key(fake):
    with pytest.raises(wai.PlatformError) as info:
        platform.datasets(api_key=KEY + "x")  # the fake echoes the key it got in its 401 message
    err = info.value
    assert err.status == 401 and "<redacted>" in err.message and KEY not in str(err)


def test_404_carries_the_service_message(keyed):
    with pytest.raises(wai.PlatformError, match="no dataset ds_9") as info:
        platform.train("ds_9", method="grpo")
    assert info.value.status == 404 and info.value.code == "not_found"


def test_5xx_retries_idempotent_calls_only(keyed):
    client = platform.Client(backoff_s=0.0)
    keyed.server.fail(2, status=503)
    assert platform.datasets(client=client) == []  # GET: two 503s, then the answer
    keyed.server.fail(3, status=503)
    with pytest.raises(wai.PlatformError) as info:
        platform.runs(client=client)
    assert info.value.status == 503
    before = len(keyed.requests)
    keyed.server.fail(1, status=502)
    with pytest.raises(wai.PlatformError) as info:
        platform.push(_rows(2, mixed=True), "once", client=client)  # POST: never sent twice
    assert info.value.status == 502 and len(keyed.requests) - before == 1


def test_a_key_appears_in_no_exception_log_or_repr(fake, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("WHILEAI_API_KEY", KEY)
    seen: list[str] = []
    client = platform.Client(backoff_s=0.0)
    seen += [repr(client), str(client)]
    fake.server.fail(3, status=500, body=f"upstream saw key {KEY}")
    unreachable = platform.Client(KEY, api_url="http://127.0.0.1:9", max_attempts=2, backoff_s=0.0)
    calls = [lambda: platform.runs(client=client),  # a 500 whose body quotes the key
             lambda: platform.datasets(api_key=KEY + "!"),  # a 401 quoting a key
             lambda: platform.pull("ds_404", client=client),
             lambda: platform.datasets(client=unreachable)]  # nothing listening: a transport error
    for call in calls:
        with pytest.raises(wai.PlatformError) as info:
            call()
        seen += [str(info.value), repr(info.value), "".join(traceback.format_exception(info.value)),
                 repr(info.value.__dict__), repr(info.value.__context__), repr(info.value.__cause__)]
    seen.append(caplog.text)
    assert caplog.records  # the client did log (method, route, status)
    assert not [s for s in seen if KEY in s]


# ---- track ----------------------------------------------------------------------------------------
def test_track_an_agent_run_curve_and_scores(keyed):
    with platform.track("support-bot") as tracked:
        tracked.behavior("refunds", "refunds only with an order id")
        run = tracked.run("v1")
        run.log(10, loss=0.4)
        run.score("refunds", 82)
        with pytest.warns(UserWarning, match="out of 100"):
            run.score("refunds", 0.82)
        run.finish()
        assert [r["runId"] for r in tracked.runs()] == [run.id]
        with pytest.raises(wai.InvalidArgument, match="40"):
            tracked.run("v" * 41)
    stored = keyed.runs[run.id]
    assert stored["points"] == [{"step": 10, "loss": 0.4}] and stored["status"] == "done"
    assert [e["score"] for e in stored["evals"]] == [82, 0.82]
    assert keyed.agents["ag_1"]["behaviors"] == {"refunds": {"description": "refunds only with an order id"}}
