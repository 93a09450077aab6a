"""Training curves to MLflow (``wai.train(..., mlflow=True)``), and the one place MLflow is reached: the
optional ``mlflow`` extra, imported only when called; a plain folder as tracking URI is MLflow's file store.
``whileai_core.report.tracking`` logs evaluation runs through it."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
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


@contextlib.contextmanager
def quiet_mlflow() -> Iterator[None]:
    """MLflow's own chatter held back while whileai logs: its INFO lines ("Experiment with name 'whileai' does
    not exist. Creating a new experiment.", which under pytest lands on the ``[100%]`` progress line) and the
    warnings raised inside MLflow's code (pandas' Pandas4Warning from ``log_table``), which are MLflow's to fix,
    not the caller's. MLflow's warnings and errors still print."""
    logger = logging.getLogger("mlflow")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"mlflow(\.|$)")
            yield
    finally:
        logger.setLevel(level)


def open_command(uri: str | os.PathLike[str] | None) -> str:
    """The command that shows this store in MLflow's UI: a file store (a folder, the default ``./mlruns``) needs
    ``MLFLOW_ALLOW_FILE_STORE=true`` there too, since MLflow 3 refuses that store without it."""
    text = os.fspath(uri) if uri is not None else D.MLFLOW_TRACKING_URI
    resolved = tracking_uri(text)
    if resolved.startswith(("http://", "https://", "databricks")):
        return f"open {resolved}"
    if resolved.startswith("file:"):
        return f"MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri {text}"
    return f"mlflow ui --backend-store-uri {text}"


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
    with quiet_mlflow():
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
