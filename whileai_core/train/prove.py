"""Prove: ``prove(before, after, holdout_rows, judge)`` plays both models on the holdout, grades both with the
same judge and reports ``measure.delta_report``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import (
    LOCAL_BATCH_SIZE,
    LOCAL_MAX_NEW_TOKENS,
    LOCAL_TEMPERATURE,
    PROVE_ROLLOUTS,
    TRAIN_SEED,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.progress import Progress
from whileai_core.rows import Row, as_rows, group_rows, task_key
from whileai_core.train.holdout import contamination


# ----------------------------------------------------------------------------------------------------------
# prove
# ----------------------------------------------------------------------------------------------------------
@dataclass
class ProveReport:
    """Both models on the same holdout, graded by the same judge, and the paired delta between them."""

    delta: Any
    before: list[Row]
    after: list[Row]
    before_model: str
    after_model: str
    n_tasks: int
    rollouts: int
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        delta = self.delta.to_dict() if hasattr(self.delta, "to_dict") else self.delta
        return {"before_model": self.before_model, "after_model": self.after_model, "n_tasks": self.n_tasks,
                "rollouts": self.rollouts, "delta": delta, "warnings": list(self.warnings)}

    def __str__(self) -> str:
        head = (f"prove: {self.after_model} vs {self.before_model} on {self.n_tasks} holdout tasks "
                f"x {self.rollouts} rollout(s)")
        lines = [head, str(self.delta)]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _as_player(model: Any, *, system_prompt: str | None, tools: Any, max_new_tokens: int,
               temperature: float, seed: int) -> tuple[Any, str]:
    from whileai_core.models.local_model import LocalModel

    if isinstance(model, LocalModel):
        return model, model.name
    if isinstance(model, (str, os.PathLike)) or isinstance(getattr(model, "checkpoint", None), str):
        lm = LocalModel(model if isinstance(model, (str, os.PathLike)) else model.checkpoint,
                        system_prompt=system_prompt, tools=tools, max_new_tokens=max_new_tokens,
                        temperature=temperature, seed=seed)
        return lm, lm.name
    if callable(getattr(model, "complete", None)):  # a backend, e.g. wai.serve(...).endpoint: same decoding as a LocalModel
        from whileai_core.simulate.model_agent import as_agent

        agent = as_agent(model, tools=tools, system_prompt=None, temperature=temperature, max_tokens=max_new_tokens,
                         cache=False)
        return agent, agent.__name__
    if callable(model):
        return model, getattr(model, "__name__", None) or getattr(model, "name", None) or type(model).__name__
    raise InvalidArgumentType(f"a model for prove() must be a checkpoint path, a LocalModel, a TrainResult, a backend "
                              "(wai.Endpoint) or an agent callable; "
                    f"got {type(model).__name__}")


def _prompt_for(player: Any, base: Mapping[str, Any], system_prompt: str | None) -> list[dict[str, Any]]:
    from whileai_core.models.local_model import LocalModel
    from whileai_core.train.trl_formats import prompt_of

    prompt = prompt_of(base, system_prompt=system_prompt)
    if isinstance(player, LocalModel) and player.system_prompt and prompt[0].get("role") == "system":
        prompt = prompt[1:]  # the model's own system prompt wins
    return prompt


def _rollout_row(base: Mapping[str, Any], prompt: list[dict[str, Any]], result: Mapping[str, Any], arm: str,
                 name: str, index: int) -> Row:
    from whileai_core.train.trl_formats import completion_row

    row = completion_row(base, prompt, [{"role": "assistant", "content": result.get("final_text", "")}])
    row["steps"] = list(result.get("steps") or [])
    if result.get("messages"):
        row["messages"] = list(result["messages"])
    key = task_key(base)
    row.update(task_id=key, rollout_index=index, row_id=f"{key}#{index}", status="ok", finish_reason="stop")
    row["lineage"] = {**(base.get("lineage") or {}), "source": "prove", "arm": arm, "agent": name}
    return row


def _play_all(player: Any, bases: Sequence[Mapping[str, Any]], rollouts: int, arm: str, name: str,
              system_prompt: str | None, batch_size: int) -> list[Row]:
    """Every (task, rollout) played by one model: batched decoding for a tool-less LocalModel, else one by one."""
    from whileai_core.models.local_model import LocalModel, reply_message
    from whileai_core.simulate.model_agent import ModelAgent
    from whileai_core.simulate.situations import Scenario

    jobs = [(base, i) for base in bases for i in range(rollouts)]
    prompts = [_prompt_for(player, base, system_prompt) for base, _ in jobs]
    if isinstance(player, LocalModel) and not player.tools:
        texts = player.generate_many(prompts, batch_size=batch_size)
        out = []
        for (base, i), prompt, text in zip(jobs, prompts, texts):
            reply = reply_message(text)
            made: dict[str, Any] = {"steps": [], "final_text": reply["content"],
                                    "messages": player._messages(prompt) + [reply]}
            out.append(_rollout_row(base, prompt, made, arm, name, i))
        return out
    out = []
    bar = Progress(len(jobs), f"prove ({arm}: {name})")
    for (base, i), prompt in zip(jobs, prompts):
        bar.update()
        if isinstance(player, LocalModel):
            result: Any = player.run(prompt)
        else:
            user = next((m["content"] for m in reversed(prompt) if m.get("role") == "user"), "")
            if isinstance(player, ModelAgent):  # a served model sees the same system + user messages as a LocalModel
                system = next((m["content"] for m in prompt if m.get("role") == "system"), None)
                result = player(Scenario(user, system_prompt=system, task_id=task_key(base), rollout_index=i))
            else:
                result = player(user)
            if isinstance(result, str):
                result = {"steps": [], "final_text": result}
            if not isinstance(result, Mapping) or "final_text" not in result:
                raise InvalidArgumentType(f"agent {name!r} returned {type(result).__name__}; the agent contract is "
                                "agent(message) -> {'steps': [...], 'final_text': str}")
        out.append(_rollout_row(base, prompt, result, arm, name, i))
    bar.close()
    return out


def prove(
    before_model: Any,
    after_model: Any,
    holdout_rows: Any,
    judge: Callable[[Row], Any],
    *,
    rollouts: int = PROVE_ROLLOUTS,
    max_new_tokens: int = LOCAL_MAX_NEW_TOKENS,
    temperature: float = LOCAL_TEMPERATURE,
    system_prompt: str | None = None,
    tools: Any = None,
    train_rows: Any = None,
    seed: int = TRAIN_SEED,
    batch_size: int = LOCAL_BATCH_SIZE,
    **delta_kwargs: Any,
) -> ProveReport:
    """Play ``before_model`` and ``after_model`` on every holdout task, grade both with ``judge``, and report
    the paired delta (``measure.delta_report``: delta, interval, p-value, n paired, verdict).

    A model is a checkpoint directory, a ``TrainResult``, a ``LocalModel``, a backend such as a served
    checkpoint's ``wai.serve(...).endpoint`` (played with the same ``temperature`` and ``max_new_tokens``, on the
    same system and user messages) or any agent callable.
    With ``train_rows=`` the holdout is checked against the training rows first; contaminated tasks are
    named in a warning. ``rollouts > 1`` needs ``temperature > 0`` (greedy replies would repeat). A ``LocalModel``
    without tools decodes ``batch_size`` prompts at a time; with tools (or an agent callable) rollouts run one by one.

    Args:
        before_model: the model before training: a checkpoint directory, a ``TrainResult``, a ``LocalModel`` or an
            agent callable.
        after_model: the model after training, same kinds.
        holdout_rows: the held-out rows (one task per distinct task key; ``wai.holdout``).
        judge: the judge both arms are graded with (0/1 rewards: pass@1).
        rollouts: rollouts per task per arm (``PROVE_ROLLOUTS`` 1). (``PROVE_ROLLOUTS``)
        max_new_tokens: the reply budget of a checkpoint it loads (``LOCAL_MAX_NEW_TOKENS``).
            (``LOCAL_MAX_NEW_TOKENS``)
        temperature: decoding temperature (``LOCAL_TEMPERATURE`` 0: greedy, so the arms differ only by weights).
            (``LOCAL_TEMPERATURE``)
        system_prompt: the system prompt (default: each row's).
        tools: tools a loaded checkpoint may call.
        train_rows: the training rows, to check the holdout for contamination first.
        seed: the sampling seed. (``TRAIN_SEED``)
        batch_size: prompts decoded together without tools (``LOCAL_BATCH_SIZE`` 16). (``LOCAL_BATCH_SIZE``)
        **delta_kwargs: passed to ``delta_report`` (``noise=``, ``min_effect=``, ``level=`` ...).

    Returns:
        A ``ProveReport``: ``.delta`` (a ``DeltaReport``), ``.before`` / ``.after`` graded rows, ``.warnings``; it
            prints itself.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.
        InvalidArgumentType: an argument of the wrong type (a ``TypeError``); the message names it.

    Example:
        ```python
        train_rows, hold_rows = wai.holdout(scored.rows)
        result = wai.train(wai.select(train_rows, mode="sft"), "sft", model="./base")
        print(wai.prove("./base", result, hold_rows, my_judge, train_rows=train_rows))
        ```
    """
    integer("rollouts", rollouts, minimum=1)
    integer("max_new_tokens", max_new_tokens, minimum=1)
    integer("batch_size", batch_size, minimum=1)
    if rollouts > 1 and temperature <= 0:
        raise InvalidArgument(f"rollouts={rollouts} with temperature={temperature} repeats one greedy reply; "
                         "pass temperature > 0 or rollouts=1")
    if not callable(judge):
        raise InvalidArgumentType(f"judge= must be callable (row -> verdict); got {type(judge).__name__}")
    data = as_rows(holdout_rows, name="holdout_rows")
    if not data:
        raise InvalidArgument("holdout_rows= is empty; split one off with wai.holdout(rows)")
    notes: list[str] = []
    if train_rows is not None:
        dirty = contamination(data, train_rows)
        if dirty:
            sample = ", ".join(f"{k} ({v})" for k, v in list(dirty.items())[:5])
            notes.append(f"{len(dirty)} holdout task(s) also appear in train_rows: {sample}; the delta is partly "
                         "measured on training data. Re-split with wai.holdout(rows)")
    from whileai_core.grade.run import run_judge
    from whileai_core.measure.delta import delta_report

    bases = {key: members[0] for key, members in group_rows(data).items()}
    arms: dict[str, list[Row]] = {}
    names: dict[str, str] = {}
    for arm, model in (("before", before_model), ("after", after_model)):
        player, name = _as_player(model, system_prompt=system_prompt, tools=tools, max_new_tokens=max_new_tokens,
                                  temperature=temperature, seed=seed)
        names[arm] = name
        played = _play_all(player, list(bases.values()), rollouts, arm, name, system_prompt, batch_size)
        arms[arm] = list(run_judge(played, judge, on_error="keep"))
    for arm, graded in arms.items():
        failed = sum(1 for r in graded if r.get("reward") is None)
        if failed:
            notes.append(f"the judge failed on {failed} of {len(graded)} {arm} rows; they are left out of the delta")
    report = delta_report(arms["before"], arms["after"], **delta_kwargs)
    return ProveReport(delta=report, before=arms["before"], after=arms["after"], before_model=names["before"],
                       after_model=names["after"], n_tasks=len(bases), rollouts=rollouts, warnings=notes)
