"""Progress: a bar on a terminal, plain periodic lines without one or under CI, nothing under quiet."""

from __future__ import annotations

import io

from whileai_core.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_under_ci_at_most_every_interval():
    out = io.StringIO()
    bar = Progress(10, "grade", stream=out, every_s=0.0, env={"CI": "true"})
    assert bar.mode == "lines"
    for _ in range(10):
        bar.update()
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10  # 9 periodic (every_s=0) + the last one
    assert lines[-1].startswith("grade: 10/10 (100%)") and "ETA 0s" in lines[-1]


def test_a_short_plain_job_prints_nothing():
    out = io.StringIO()
    with Progress(5, "grade", stream=out, every_s=3600, env={}) as bar:
        for _ in range(5):
            bar.update()
    assert out.getvalue() == ""


def test_a_terminal_gets_a_bar_with_rate_and_eta():
    out = _Tty()
    bar = Progress(4, "prove", stream=out, env={})
    assert bar.mode == "bar"
    bar.update(2)
    state = bar._bar.format_dict  # tqdm's own record: what it draws (count, total, rate -> ETA)
    assert (state["n"], state["total"]) == (2, 4) and "rate" in state and out.getvalue().startswith("\rprove:")
    bar.close()


def test_quiet_and_tiny_jobs_show_nothing():
    for kwargs in ({"quiet": True}, {"total": 1}):
        out = _Tty()
        bar = Progress(**{"total": 100, "label": "x", "stream": out, "env": {}, **kwargs})
        bar.update()
        bar.close()
        assert bar.mode == "off" and out.getvalue() == ""


def test_simulate_draws_one_bar_on_a_terminal_and_plain_lines_in_a_log(monkeypatch):
    """simulate's rollouts: a tqdm bar (count, total, rate) on a terminal, cleared at the end; in a log the
    plain "whileai: N/M rollouts" lines."""
    import sys

    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""

    monkeypatch.delenv("CI", raising=False)
    seen = {}
    for name, stream in (("tty", _Tty()), ("log", io.StringIO())):
        monkeypatch.setattr(sys, "stderr", stream)
        data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, repeats=4,
                            budget=64, progress=True)
        assert len(data) == 64
        seen[name] = stream.getvalue()
    # tqdm redraws at most every 0.1 s, so a fast run shows its first frame, then the bar is cleared
    assert seen["tty"].startswith("\rwhileai simulate (rollouts):") and "/64 [" in seen["tty"]
    assert "it/s" in seen["tty"] and "whileai: " not in seen["tty"]
    assert "whileai: 64/64 rollouts" in seen["log"] and "\r" not in seen["log"]
