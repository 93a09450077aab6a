"""What the controller writes at the end of a session: saved baselines, the JSON run document, the JUnit
report, and (under GitHub Actions) the step summary and annotations. A failed write is reported, not raised."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import pytest

from pytest_whileai.gate.store import Store
from pytest_whileai.report import markdown
from whileai_core.gate.document import dump_document


def write_outputs(wai: Any) -> None:
    s = wai.settings
    if not wai.results and wai.gate is None:
        if wai.save_refusals and (s.save or s.autosave):  # e.g. Ctrl-C before the first scenario finished
            from pytest_whileai.gate.saving import refusal_note

            wai.notes.append(refusal_note(wai.save_refusals, s, wai.storage_dir()))
        return
    doc = None

    def document() -> dict[str, Any]:
        nonlocal doc
        if doc is None:
            doc = wai.document(name=s.save)
            wai.config.hook.pytest_whileai_update_json(config=wai.config, run_json=doc)
        return doc

    _refuse_partial_saves(wai)
    jobs = _baseline_jobs(wai, document) + _file_jobs(wai, document)
    for what, job in jobs:
        try:
            wai.saved.append(str(job()))
        except (OSError, ValueError, ImportError) as exc:
            wai.write_errors.append(f"could not write the {what} file: {exc}")
            if not wai.exit_status:  # a failed write makes the run exit 1: the files written after it say so
                wai.exit_status = int(pytest.ExitCode.TESTS_FAILED)
                doc = None
    if markdown.github_enabled(s.github):
        _github_outputs(wai)


Job = tuple[str, Callable[[], Any]]


def _refuse_partial_saves(wai: Any) -> None:
    """A run cut short (a crashed worker, the budget, an INCOMPLETE gate) saves no baseline."""
    if wai.failed_workers:
        wai.refuse_save(f"xdist worker(s) {', '.join(wai.failed_workers)} crashed, so this run is partial (the "
                        "report lists every finished scenario)")
    if any(e.get("budget_stop") for e in wai.results.values()):
        wai.refuse_save("--wai-budget stopped this run early, so it is partial")
    if wai.gate is not None and wai.gate.status == "incomplete":  # the gate line says why (unscored, crash, budget)
        wai.refuse_save("the gate is INCOMPLETE, so this run is partial")


def _baseline_jobs(wai: Any, document: Callable[[], dict[str, Any]]) -> list[Job]:
    """--wai-save / --wai-autosave: the store's writes, or the note that says why none is made."""
    s = wai.settings
    jobs: list[Job] = []
    if s.trial_index is not None and (s.save or s.autosave):
        wai.notes.append("not saving a baseline in reproduce mode (--wai-trial-index runs one trial per scenario)")
    elif wai.save_refusals and (s.save or s.autosave):
        from pytest_whileai.gate.saving import refusal_note

        wai.notes.append(refusal_note(wai.save_refusals, s, wai.storage_dir()))
    elif s.trial_index is None and wai.results:
        store = Store(wai.storage_dir())
        if s.save:
            from pytest_whileai.gate.scenario import require_saveable  # a baseline must score every scenario

            jobs.append(("baseline", lambda: store.save(require_saveable(lean(document())), s.save)))
        if s.autosave:
            jobs.append(("autosave", lambda: store.autosave(lean(document()))))
    return jobs


def _file_jobs(wai: Any, document: Callable[[], dict[str, Any]]) -> list[Job]:
    """The report files asked for: JSON, Markdown, JUnit XML, HTML, MLflow."""
    s = wai.settings
    jobs: list[Job] = []
    if s.json:
        jobs.append(("json", lambda: _write_json(s.json, document())))
    if s.markdown:
        from whileai_core.rows import atomic_write_text

        jobs.append(("markdown", lambda: atomic_write_text(s.markdown, markdown.markdown(wai), overwrite=True)))
    if s.junitxml:
        from pytest_whileai.report import junit

        jobs.append(("junitxml", lambda: junit.write(s.junitxml, wai.results, wai.gate, baseline=s.baseline,
                                                              collect_errors=wai.collect_errors)))
    if s.html:
        jobs.append(("html", lambda: _write_html(wai, document())))
    if s.mlflow:
        jobs.append(("mlflow", lambda: _log_mlflow(wai, document())))
    return jobs


def _github_outputs(wai: Any) -> None:
    """Under GitHub Actions: the step summary (a failed append is reported) and the annotations."""
    try:
        path = markdown.write_step_summary(wai)
        if path:
            wai.saved.append(f"{path} (GitHub step summary)")
    except OSError as exc:
        wai.write_errors.append(f"could not append to GITHUB_STEP_SUMMARY: {exc}")
    markdown.emit_annotations(wai, stream=sys.stderr)


def lean(doc: dict[str, Any]) -> dict[str, Any]:
    """The document a baseline store keeps: without the failing trials' transcripts (the report's, kept in
    --wai-json and --wai-html), so stored baselines stay the size of their rewards."""
    return {**doc, "scenarios": [{k: v for k, v in sc.items() if k != "transcripts"} for sc in doc["scenarios"]]}


def _write_json(path: str, doc: dict[str, Any]) -> str:
    from whileai_core.rows import atomic_write_text

    return str(atomic_write_text(os.fspath(path), dump_document(doc), overwrite=True))


def _write_html(wai: Any, doc: dict[str, Any]) -> str:
    """The self-contained HTML report (``whileai_core.report.html``) of this session, beside its baseline."""
    from whileai_core.report.html import report

    return str(report(doc, wai.settings.html, baseline=wai.baseline, gate=wai.gate, prices=wai.settings.prices,
                      level=wai.settings.level, repo=str(wai.config.rootpath), plotlyjs=wai.settings.html_plotlyjs))


def _log_mlflow(wai: Any, doc: dict[str, Any]) -> str:
    """The run logged to MLflow; the HTML report attached (the one written by --wai-html, else a fresh one)."""
    from whileai_core.report.tracking import log_mlflow
    from whileai_core.train.curves import open_command

    html = wai.settings.html if wai.settings.html and os.path.exists(wai.settings.html) else True
    run_id = log_mlflow(doc, baseline=wai.baseline, gate=wai.gate, uri=wai.settings.mlflow_uri, html=html,
                        prices=wai.settings.prices, level=wai.settings.level)
    return f"MLflow run {run_id} at {wai.settings.mlflow_uri} (to see it: {open_command(wai.settings.mlflow_uri)})"
