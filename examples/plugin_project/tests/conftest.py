import pytest
from agent_under_test import judge


@pytest.fixture
def wai_judge():
    """The suite's judge: every wai_eval.run() in this folder grades with it."""
    return judge


def pytest_whileai_generate_run_info(config):
    """What the baseline must share with this run to be compared (a different judge or prompt is refused)."""
    from agent_under_test import SYSTEM_PROMPT

    return {"agent": "seeded_agent", "judge": "judge_v1", "system_prompt": SYSTEM_PROMPT}
