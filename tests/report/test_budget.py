"""Cost and budget in the plugin: tokens and cost in the terminal summary, and --wai-budget stopping a run with
a clear message, the trials so far kept in the run document, and a gate that is red (incomplete), never green."""

from __future__ import annotations

import json

import pytest

SUITE = '''
import pytest

def agent(message):
    return {"steps": [], "final_text": "done", "model": "m", "usage": {"input_tokens": 40, "output_tokens": 10}}

@pytest.mark.wai(trials=4)
@pytest.mark.parametrize("n", range(3))
def test_scenario(wai_eval, n):
    wai_eval.run(agent, f"case {n}", judge=lambda row: {"reward": 1, "reason": "fine"})
'''


def _prices(pytester: pytest.Pytester) -> str:
    path = pytester.path / "prices.json"
    path.write_text(json.dumps({"m": {"input": 2.0, "output": 10.0}}))
    return str(path)


def test_tokens_and_cost_in_the_terminal_summary(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", f"--wai-prices={_prices(pytester)}")
    result.assert_outcomes(passed=3)
    # 3 scenarios x 4 trials x (40 in, 10 out) tokens; $2 / $10 per 1M
    result.stdout.fnmatch_lines(["tokens: 480 in / 120 out over 1 model(s); estimated cost $0.0022"])


def test_a_token_budget_stops_the_run_and_keeps_the_trials(pytester):
    pytester.makepyfile(test_suite=SUITE)
    run = pytester.path / "run.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "--wai-budget=250", f"--wai-json={run}")
    assert result.ret == 1
    # 50 tokens a trial: the 6th trial (scenario 1, trial 1) passes 250; pytest stops after that test
    result.stdout.fnmatch_lines(["*token budget exceeded: 300 tokens spent, budget 250*",
                                 "suite gate: INCOMPLETE: token budget exceeded*"])
    doc = json.loads(run.read_text())
    assert [len(sc["rewards"]) for sc in doc["scenarios"]] == [4, 4]  # the trials so far, kept, and the rest
    assert doc["scenarios"][1]["trial_states"] == [None, None, "budget_stop", "budget_stop"]  # in the ledger
    assert doc["gate"]["status"] == "incomplete" and doc["gate"]["red"]
    result.assert_outcomes(passed=1, failed=2, skipped=1)  # scenario 2 skipped; the red gate is a failed test
    result.stdout.fnmatch_lines(["SKIPPED*whileai: not run, token budget exceeded*"])


def test_a_dollar_budget_needs_prices_and_a_bad_budget_is_refused(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--wai-budget=$0.001")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a dollar budget ($0.001) needs a price table*"])
    result = pytester.runpytest("-p", "no:cacheprovider", "--wai-budget=lots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*budget 'lots' must be a token count*"])
    result = pytester.runpytest("-p", "no:cacheprovider", f"--wai-prices={_prices(pytester)}", "--wai-budget=$0.001")
    result.stdout.fnmatch_lines(["*cost budget exceeded: $0.0011 spent, budget $0.00*"])


# --- issue 26 item 5: budgets mean money ------------------------------------------------------------------------
PREFIXED = SUITE.replace('"model": "m"', '"model": "openai:gpt-test"')


def _junit_gate(pytester) -> str | None:
    import xml.etree.ElementTree as ET

    for case in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"):
        if case.get("name") == "suite_gate" and case.find("failure") is not None:
            return case.find("failure").get("message")
    return None


def test_a_dollar_budget_finds_the_price_without_the_provider_prefix_and_saves_nothing(pytester):
    pytester.makepyfile(test_suite=PREFIXED)
    prices = pytester.path / "prices.json"
    prices.write_text(json.dumps({"gpt-test": {"input": 2000.0, "output": 10000.0}}))  # $0.18 a trial
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml", "--wai-budget=$0.5",
                                f"--wai-prices={prices}", "--wai-save=main")
    assert result.ret == 1
    final = [line for line in result.outlines if line.startswith("=")][-1]
    assert "failed" in final
    result.stdout.fnmatch_lines(["*cost budget exceeded: $0.5400 spent, budget $0.50*",
                                 "*not saving a baseline: --wai-budget stopped this run early*"])
    assert "INCOMPLETE" in (_junit_gate(pytester) or "")
    assert not (pytester.path / ".whileai" / "baselines" / "main.json").exists()


def test_a_dollar_budget_with_an_unpriced_model_stops_never_zero_dollars(pytester):
    pytester.makepyfile(test_suite=PREFIXED)
    prices = pytester.path / "prices.json"
    prices.write_text(json.dumps({"other-model": {"input": 1.0, "output": 1.0}}))
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml", "--wai-budget=$100",
                                f"--wai-prices={prices}", "--wai-save=main")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*cost budget cannot be counted: no price for openai:gpt-test*"])
    assert "INCOMPLETE" in (_junit_gate(pytester) or "")
    assert not (pytester.path / ".whileai" / "baselines" / "main.json").exists()


def test_price_key_matches_with_or_without_the_provider_prefix():
    from whileai_core.report.cost import Cost, price_key

    assert price_key("openai:gpt-test", {"gpt-test": {}}) == "gpt-test"
    assert price_key("gpt-test", {"openai:gpt-test": {}}) == "openai:gpt-test"
    assert price_key("gpt-test", {"other": {}}) is None
    cost = Cost({"openai:gpt-test": {"input_tokens": 1_000_000, "output_tokens": 0}},
                {"gpt-test": {"input": 2.0, "output": 8.0}})
    assert cost.dollars == 2.0 and cost.unpriced == []


def test_a_budget_passed_by_the_xdist_workers_together_is_incomplete_and_saves_nothing(pytester):
    """Each xdist worker counts only its own spend: 2 workers x 1,000 tokens passed a 1,500-token budget without
    either stopping, and the run was green and saved. The controller now sums every scenario's usage."""
    suite = SUITE.replace("range(3)", "range(10)")  # 10 scenarios x 4 trials x 50 tokens = 2,000 tokens
    pytester.makepyfile(test_suite=suite)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--junitxml=junit.xml",
                                           "--wai-budget=1500", "--wai-save=main", "--wai-json=run.json")
    assert result.ret == 1
    final = [line for line in result.outlines if line.startswith("=")][-1]
    if "by the xdist workers together" in result.stdout.str():  # each worker stayed under 1,500 (a 5/5 split)
        assert "1 failed, 10 passed" in final
        together = "*token budget exceeded: 2,000 tokens spent, budget 1,500 by the xdist workers together*"
        result.stdout.fnmatch_lines([together, "*not saving a baseline: --wai-budget: token budget exceeded*"])
    else:  # xdist gave one worker 8+ scenarios: that worker stopped on its own spend, its scenario failed too
        assert "2 failed, 9 passed" in final
        result.stdout.fnmatch_lines(["*token budget exceeded: *tokens spent, budget 1,500: the run stopped*",
                                     "*not saving a baseline: --wai-budget stopped this run early*"])
    assert "INCOMPLETE" in (_junit_gate(pytester) or "")
    assert json.loads((pytester.path / "run.json").read_text())["gate"]["status"] == "incomplete"
    assert not (pytester.path / ".whileai" / "baselines" / "main.json").exists()
