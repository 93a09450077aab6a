"""Agent scenarios as tests: one item per covering-array cell, k trials each, gated against a baseline.

    pytest --wai-save=main                      # store a baseline
    pytest --wai-baseline=main                  # unchanged agent: green
    WAI_EXAMPLE_SHARE=0.8 pytest --wai-baseline=main   # worse agent: red, with the delta
"""

import pytest
from agent_under_test import SYSTEM_PROMPT, TOOLS, agent


@pytest.mark.wai_scenarios(tools=TOOLS, system_prompt=SYSTEM_PROMPT)
def test_order_desk(wai_eval):
    result = wai_eval.run(agent)  # the scenario of this item is wai_eval.scenario
    assert result.n_scored == result.k


@pytest.mark.wai(trials=8, min_pass_rate=0.5)
@pytest.mark.wai_key("refund-question")
def test_refund_question(wai_eval):
    wai_eval.run(agent, "Can I get a refund on order A1234? It arrived broken.")
