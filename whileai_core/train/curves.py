"""Training curves to MLflow (``wai.train(..., mlflow=True)``), and the one place MLflow is reached: the
optional ``mlflow`` extra, imported only when called; a plain folder as tracking URI is MLflow's file store.
``whileai_core.report.tracking`` logs evaluation runs through it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import MissingExtra

INSTALL_HINT = "pip install 'pytest-whileai[mlflow]'"


def mlflow_module() -> Any:
    try:
        import mlflow
    except ImportError:
        raise MissingExtra(f"experiment tracking needs MLflow, which is not installed: {INSTALL_HINT}") from None
    return mlflow


def tracking_uri(uri: str | os.PathLike[str] | None) -> str:
    """A URI MLflow accepts: a scheme URI as given, a plain path as an absolute ``file://`` URI (a file store)."""
    text = os.fspath(uri) if uri is not None else D.MLFLOW_TRACKING_URI
    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", text) and not re.match(r"^[A-Za-z]:[\\/]", text):
        if not text.startswith("file:"):
            return text
    else:
        text = Path(text).resolve().as_uri()
    # MLflow 3.x keeps the file store "in maintenance mode" and refuses it unless this opt-out is set; a folder
    # asked for by name (the default ./mlruns) is that store, so the opt-out is set for this process.
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return text


def metric_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-. /]", "_", text.replace("^", "_pow_").replace("@", "_at_"))


def log_training(history: Iterable[Mapping[str, Any]], *, uri: str | os.PathLike[str] | None = None,
                 experiment: str = D.MLFLOW_EXPERIMENT, run_name: str | None = None,
                 params: Mapping[str, Any] | None = None) -> str:
    """Log a trainer's ``log_history`` (a list of dicts with ``step`` and numbers) as MLflow curves.

    Returns the MLflow run id. Raises ``MissingExtra`` without MLflow.
    """
    mlflow = mlflow_module()
    mlflow.set_tracking_uri(tracking_uri(uri))
    mlflow.set_experiment(experiment)
    with mlflow.start_run(run_name=run_name) as run:
        if params:
            mlflow.log_params({str(k): str(v)[:500] for k, v in params.items()})
        for i, entry in enumerate(history):
            step = int(entry.get("step", i))
            numbers = {metric_name(str(k)): float(v) for k, v in entry.items()
                       if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool)}
            if numbers:
                mlflow.log_metrics(numbers, step=step)
        return str(run.info.run_id)
