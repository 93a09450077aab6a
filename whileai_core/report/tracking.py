"""``wai.log_mlflow``: a run's numbers to MLflow (a local ``./mlruns`` file store by default, any server by
URI): pass@1 / pass^k / pass@k with their interval bounds, the suite delta with its interval and p, a
per-scenario table, tokens, and the HTML report as an artifact (MLflow is reached through
``whileai_core.train.curves``, which also logs training curves).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from whileai_core import defaults as D
from whileai_core.report.inputs import as_inputs
from whileai_core.report.view import build_view
from whileai_core.train.curves import metric_name, mlflow_module, quiet_mlflow, tracking_uri


def run_metrics(view: Mapping[str, Any]) -> dict[str, float]:
    """The numbers logged: each metric and its interval bounds (before and after), the suite delta row."""
    out: dict[str, float] = {}
    for m in view.get("metrics") or []:
        name = metric_name(m["metric"])
        for side in ("after", "before"):
            prefix = name if side == "after" else f"baseline.{name}"
            if m.get(f"{side}_value") is not None:
                out[prefix] = float(m[f"{side}_value"])
            if m.get(f"{side}_ci"):
                out[f"{prefix}.ci_low"], out[f"{prefix}.ci_high"] = map(float, m[f"{side}_ci"])
    gate = view.get("gate") or {}
    for key in ("delta", "p_value", "n_paired"):
        if isinstance(gate.get(key), (int, float)):
            out[f"suite.{key}"] = float(gate[key])
    if gate.get("ci"):
        out["suite.delta.ci_low"], out["suite.delta.ci_high"] = map(float, gate["ci"])
    if view.get("scenarios") is not None:
        out["scenarios"] = float(len(view["scenarios"]))
    cost = view.get("cost_data") or {}
    if cost.get("by_model"):
        out["tokens.input"], out["tokens.output"] = float(cost["input_tokens"]), float(cost["output_tokens"])
        if cost.get("dollars") is not None:
            out["cost.dollars"] = float(cost["dollars"])
    return out


def scenario_table(view: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Columns of the per-scenario table (one row per scenario and slice, the printed strings beside floats)."""
    rows = list(view.get("scenarios") or []) + list(view.get("slices") or [])
    return {"row": [r["label"] for r in rows], "kind": [r["kind"] for r in rows],
            "value": [r["value"] for r in rows], "ci_low": [r["ci"][0] if r["ci"] else None for r in rows],
            "ci_high": [r["ci"][1] if r["ci"] else None for r in rows], "text": [r["text"] for r in rows],
            "n": [r["n"] for r in rows], "regressed": [bool(r["regressed"]) for r in rows]}


def log_mlflow(obj: Any, *, baseline: Any = None, gate: Any = None, uri: str | os.PathLike[str] | None = None,
               experiment: str = D.MLFLOW_EXPERIMENT, run_name: str | None = None, html: bool | str = True,
               prices: Any = None, level: float = D.CI_LEVEL, tags: Mapping[str, str] | None = None) -> str:
    """Log a run to MLflow and return the MLflow run id.

    Args:
        obj: what ``wai.report`` takes: a run document, ``ScoredData`` or rows, a ``DeltaReport``, a ``Comparison``.
        baseline: the run compared with (default none).
        gate: the suite gate (default: the document's own, else computed with the defaults when a baseline is given).
        uri: tracking URI or a folder (default ``MLFLOW_TRACKING_URI`` = ``./mlruns``, a local file store).
        experiment: experiment name (default ``MLFLOW_EXPERIMENT`` = "whileai").
        run_name: the MLflow run's name (default MLflow's).
        html: True renders the HTML report and attaches it; a path attaches that file; False attaches none.
        prices: price table for the cost metric (see ``wai.usage``).
        level: interval level (default ``CI_LEVEL``).
        tags: extra tags on the run.

    Returns:
        The MLflow run id.

    Raises:
        MissingExtra: MLflow (or, for ``html=True``, jinja2/plotly) is not installed.

    Example::

        run_id = wai.log_mlflow(scored, baseline=before, uri="./mlruns")
    """
    mlflow = mlflow_module()
    inputs = as_inputs(obj, baseline=baseline, gate=gate)
    view = build_view(inputs, level=level, prices=prices)
    client_uri = tracking_uri(uri)
    mlflow.set_tracking_uri(client_uri)
    with quiet_mlflow():
        mlflow.set_experiment(experiment)
        with mlflow.start_run(run_name=run_name) as run:
            mlflow.log_metrics(run_metrics(view))
            meta = {name: value[:500] for name, value in view["metadata"]}
            mlflow.set_tags({**{f"whileai.{k}": v for k, v in meta.items()}, **dict(tags or {})})
            if (view.get("gate") or {}).get("status"):
                mlflow.set_tag("whileai.gate", view["gate"]["status"])
            if view.get("scenarios") or view.get("slices"):
                mlflow.log_table(scenario_table(view), artifact_file="scenarios.json")
            if html:
                _log_html(mlflow, obj, html, baseline=baseline, gate=gate, prices=prices, level=level)
            return str(run.info.run_id)


def _log_html(mlflow: Any, obj: Any, html: Literal[True] | str, **kw: Any) -> None:
    if html is True:
        from whileai_core.report.html import report

        with tempfile.TemporaryDirectory() as tmp:
            mlflow.log_artifact(str(report(obj, Path(tmp) / "whileai-report.html", **kw)))
    else:
        mlflow.log_artifact(os.fspath(html))
