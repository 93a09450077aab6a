"""asks= as situations built when played (``situations.AskedSituations``): the same situations, task ids, order and run
id as the list ``from_asks`` makes, with no ``Scenario`` held per ask."""

from __future__ import annotations

import pickle

import pytest

from whileai_core.errors import InvalidArgument
from whileai_core.rows import stable_id
from whileai_core.simulate.runner import RunPlan, run_key
from whileai_core.simulate.situations import AskedSituations, Scenario, from_asks, plain_asks

ASKS = ["get order A1", "get order B2", "get order A1", "héllo \"quoted\"\n", "get order B2", "cancel C3"]


def _listed(asks: list[str]) -> list[Scenario]:
    """What simulate built before: every ask's Scenario, one per task id (the run's de-duplication)."""
    scen = from_asks(asks, system_prompt="Be brief.", tools=[])
    return list({sc.task_id: sc for sc in reversed(scen)}.values())[::-1]


def _fields(sc: Scenario) -> tuple:
    return (str(sc), *(getattr(sc, f) for f in Scenario._FIELDS))


@pytest.mark.parametrize("asks", [ASKS, ASKS[:2], ["only one"]])
def test_the_same_situations_in_the_same_order(asks):
    lazy = AskedSituations.from_asks(asks, system_prompt="Be brief.", tools=())
    listed = _listed(asks)
    assert len(lazy) == len(listed)
    assert [_fields(x) for x in lazy] == [_fields(x) for x in listed]
    assert list(lazy.task_ids()) == [x.task_id for x in listed]
    assert [_fields(x) for x in lazy[1:]] == [_fields(x) for x in listed[1:]]
    assert [_fields(x) for x in lazy.limited(1)] == [_fields(listed[0])]


def test_fields_are_replace_of_each():
    lazy = AskedSituations.from_asks(ASKS, system_prompt=None, tools=("get_order",))
    again = lazy.with_fields(eval_run=2)
    assert [_fields(x) for x in again] == [_fields(x.replace(eval_run=2)) for x in lazy]


def test_run_id_and_plan_match_the_list():
    lazy = AskedSituations.from_asks(ASKS, system_prompt=None, tools=())
    listed = _listed(ASKS)
    assert run_key(7, lazy, 3, "fixed") == stable_id(7, [str(x) for x in listed], 3, "fixed", length=32)
    assert run_key(7, [], 3, "fixed") == stable_id(7, [], 3, "fixed", length=32)
    assert list(RunPlan(lazy, 3)) == list(RunPlan(listed, 3)) == [(x.task_id, ri) for x in listed for ri in range(3)]


def test_cache_is_bounded_and_pickles_without_it():
    lazy = AskedSituations([f"ask {i}" for i in range(10)], system_prompt=None, tools=(), cache=3)
    assert [str(x) for x in lazy] == [f"ask {i}" for i in range(10)]
    assert len(lazy._cache) <= 3
    back = pickle.loads(pickle.dumps(lazy))
    assert back._cache == {} and [_fields(x) for x in back] == [_fields(x) for x in lazy]


def test_checks_as_from_asks_does():
    with pytest.raises(InvalidArgument, match=r"asks\[1\] is an empty message"):
        AskedSituations.from_asks(["fine", "  "], system_prompt=None, tools=())
    assert plain_asks(["a", "b"]) and not plain_asks(["a", {"prompt": "b"}]) and not plain_asks([Scenario("a")])
    with pytest.raises(IndexError):
        AskedSituations(["a"], system_prompt=None, tools=())[1]


def _steady(row: dict) -> dict:
    """A row without what differs between two runs of the same rollout (clock readings)."""
    return {k: v for k, v in row.items() if k != "latency_s"}


def test_simulate_over_strings_gives_the_rows_of_the_same_asks_as_dicts(tmp_path):
    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"status": "ok", "order_id": order_id}

    agent = wai.seeded_agent([get_order])
    kw = {"tools": [get_order], "repeats": 2, "seed": 3, "runs": 2, "progress": False}
    lazy = wai.simulate(agent, asks=ASKS, output=tmp_path / "a.jsonl", **kw)
    listed = wai.simulate(agent, asks=[{"prompt": a} for a in ASKS], output=tmp_path / "b.jsonl", **kw)
    assert isinstance(lazy.scenarios, AskedSituations) and isinstance(listed.scenarios, list)
    assert lazy.run_id == listed.run_id
    assert [_steady(r) for r in lazy] == [_steady(r) for r in listed]
    half = tmp_path / "a.jsonl"
    lines = half.read_text(encoding="utf-8").splitlines()
    half.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="resumed"):
        resumed = wai.simulate(agent, asks=ASKS, output=half, **kw)
    assert [_steady(r) for r in resumed] == [_steady(r) for r in listed]
