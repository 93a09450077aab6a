"""``wai.report``: one self-contained HTML file (Plotly's offline bundle and the CSS inline, nothing fetched)
from a run document, graded rows, a ``DeltaReport`` or a ``Comparison``.

The page holds a forest plot of the paired delta per scenario and per slice with its interval (suite on top,
regressions in red, sorted by effect), pass@1 / pass^k / pass@k before and after, the power line as a small
chart, a transcript viewer for failing trials (filter by scenario and status; agent and infra errors apart),
the run metadata with a stale-baseline note, and the tokens and estimated cost. Every number is the string
the terminal prints (``whileai_core.gate.text``). Needs the ``report`` extra (jinja2, plotly).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument, MissingExtra
from whileai_core.report.inputs import as_inputs
from whileai_core.report.view import build_view

INSTALL_HINT = "pip install 'pytest-whileai[report]'  (jinja2 and plotly)"
RED, GREY, BLUE, GREEN = "#c0392b", "#7f8c8d", "#2c6fbb", "#1e8449"


def _extras() -> tuple[Any, Any]:
    try:
        import jinja2
        import plotly.graph_objects as go
    except ImportError as exc:
        raise MissingExtra(f"the HTML report needs jinja2 and plotly ({exc.name} is missing): {INSTALL_HINT}") from None
    return jinja2, go


def _colour(row: dict[str, Any]) -> str:
    if row["regressed"]:
        return RED
    if row["kind"] == "suite":
        return "#111111"
    return GREY if row["kind"] == "slice" else BLUE


def forest_figure(view: dict[str, Any], go: Any) -> Any:
    """The forest plot: one trace per kind (suite, scenarios, slices), one mark per row, its interval as error
    bars; the y axis runs top-down in the view's order (suite, then each kind sorted by effect)."""
    fig = go.Figure()
    order: list[str] = []
    for name, rows, symbol in (("suite", [view["suite"]] if view["suite"] else [], "diamond"),
                               ("scenarios", view["scenarios"], "circle"), ("slices", view["slices"], "square")):
        rows = [r for r in rows if r["value"] is not None]
        if not rows:
            continue
        full = [f"{r['label']} ({r['kind']})" if r["kind"] == "slice" else r["label"] for r in rows]
        labels = _short_labels(full, taken=order)
        order += labels
        lo = [r["value"] - r["ci"][0] if r["ci"] else 0.0 for r in rows]
        hi = [r["ci"][1] - r["value"] if r["ci"] else 0.0 for r in rows]
        fig.add_trace(go.Scatter(
            x=[r["value"] for r in rows], y=labels, mode="markers", name=name,
            marker={"color": [_colour(r) for r in rows], "symbol": symbol, "size": 11 if name == "suite" else 8},
            error_x={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "thickness": 1.5},
            customdata=[[r["text"], r["n"], label] for r, label in zip(rows, full)],
            hovertemplate="%{customdata[2]}: %{customdata[0]}<br>%{customdata[1]}<extra></extra>"))
    axis = ("pass@1 delta (after - before)" if view["delta_mode"] else "pass@1") + f", {round(view['level'] * 100)}% intervals"
    fig.update_layout(height=max(220, 90 + D.REPORT_FOREST_ROW_PX * len(order)), margin={"l": 10, "r": 10, "t": 10, "b": 40},
                      xaxis={"title": axis, "zeroline": True, "zerolinecolor": "#888"}, showlegend=False,
                      yaxis={"categoryorder": "array", "categoryarray": order, "autorange": "reversed",
                             "automargin": True}, plot_bgcolor="#fafafa")
    return fig


def _short_labels(labels: Sequence[str], *, taken: Sequence[str] = ()) -> list[str]:
    """Labels cut to ``REPORT_LABEL_MAX_CHARS`` (the middle goes, so a scenario's distinguishing tail stays),
    each still unique on the axis; the full label is in the hover and the table."""
    cap, seen, out = D.REPORT_LABEL_MAX_CHARS, set(taken), []
    for label in labels:
        short = label if len(label) <= cap else f"{label[: cap // 2 - 1]}…{label[-(cap - cap // 2):]}"
        base, i = short, 2
        while short in seen:
            short, i = f"{base} #{i}", i + 1
        seen.add(short)
        out.append(short)
    return out


def _plotly_script(plotlyjs: str, path: str | os.PathLike[str] | None) -> tuple[str | None, str | None]:
    """(inline script, src) for the page's Plotly: inline (self-contained, ~4.8 MB), Plotly's CDN, one shared
    ``plotly.min.js`` written beside the page ("directory"), or a URL/path of a copy you host."""
    import plotly.offline

    if plotlyjs == "inline":
        return plotly.offline.get_plotlyjs(), None
    if plotlyjs == "cdn":
        from plotly.io._utils import plotly_cdn_url

        return None, plotly_cdn_url()
    if plotlyjs == "directory":
        if path is None:
            raise InvalidArgument('plotlyjs="directory" writes plotly.min.js beside the report: use wai.report(..., path)')
        bundle = Path(path).parent / "plotly.min.js"
        if not bundle.exists():
            from whileai_core.rows import atomic_write_text

            bundle.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(os.fspath(bundle), plotly.offline.get_plotlyjs(), overwrite=True)
        return None, "plotly.min.js"
    if isinstance(plotlyjs, str) and plotlyjs.endswith(".js"):
        return None, plotlyjs
    raise InvalidArgument(f'plotlyjs= is "inline", "cdn", "directory" or a URL/path ending in .js; got {plotlyjs!r}')


def power_figure(view: dict[str, Any], go: Any) -> Any | None:
    """The power line as two bars: scenarios needed to detect the drop, and scenarios in this suite."""
    plan = view.get("plan")
    if not plan:
        return None
    enough = plan["scenarios_here"] >= plan["scenarios_needed"]
    fig = go.Figure(go.Bar(x=[plan["scenarios_needed"], plan["scenarios_here"]],
                           y=[f"needed (k={plan['k']}, drop {plan['drop']:g})", "this suite"], orientation="h",
                           marker={"color": [GREY, GREEN if enough else RED]},
                           text=[plan["scenarios_needed"], plan["scenarios_here"]], textposition="auto"))
    fig.update_layout(height=160, margin={"l": 10, "r": 10, "t": 10, "b": 30}, xaxis={"title": "scenarios"},
                      yaxis={"automargin": True}, plot_bgcolor="#fafafa")
    return fig


def render(obj: Any, *, baseline: Any = None, gate: Any = None, by: str | Sequence[str] | None = None,
           level: float = D.CI_LEVEL, prices: Any = None, stale_days: float = D.REPORT_STALE_DAYS,
           stale_commits: int = D.REPORT_STALE_COMMITS, repo: str | None = ".", title: str | None = None,
           plotlyjs: str = D.REPORT_PLOTLYJS, path: str | os.PathLike[str] | None = None) -> str:
    """The report as one HTML string (see ``report`` for the arguments; ``path``: where it will be written,
    for ``plotlyjs="directory"``)."""
    jinja2, go = _extras()
    script, src = _plotly_script(plotlyjs, path)

    view = build_view(as_inputs(obj, baseline=baseline, gate=gate), by=by, level=level, prices=prices,
                      stale_days=stale_days, stale_commits=stale_commits, repo=repo, title=title)
    config = {"displaylogo": False, "responsive": True}
    forest = forest_figure(view, go).to_html(full_html=False, include_plotlyjs=False, div_id="forest", config=config)
    power = power_figure(view, go)
    env = jinja2.Environment(loader=jinja2.PackageLoader("whileai_core.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(
        v=view, forest_html=forest, plotlyjs=script, plotlyjs_src=src,
        power_html=None if power is None else power.to_html(full_html=False, include_plotlyjs=False,
                                                             div_id="power", config=config))


def report(obj: Any, path: str | os.PathLike[str], *, baseline: Any = None, gate: Any = None,
           by: str | Sequence[str] | None = None, level: float = D.CI_LEVEL, prices: Any = None,
           stale_days: float = D.REPORT_STALE_DAYS, stale_commits: int = D.REPORT_STALE_COMMITS,
           repo: str | None = ".", title: str | None = None, plotlyjs: str = D.REPORT_PLOTLYJS) -> Path:
    """Write the self-contained HTML report of a run to ``path`` (opens with no network).

    Args:
        obj: a run document (the plugin's ``--wai-json``), ``ScoredData`` or rows, a ``DeltaReport`` or a
            ``Comparison`` (``wai.compare``).
        path: the HTML file to write (its folder is created).
        baseline: the run to compare with (a document, ``ScoredData`` or rows; default none: pass rates only).
        gate: the suite gate (``Gate`` or its dict; default: the document's own, else computed with the defaults).
        by: scenario-cell field(s) to slice the forest plot by (default: up to ``REPORT_SLICE_FIELDS`` that vary).
        level: interval level (default ``CI_LEVEL`` = 0.95).
        prices: model -> {"input", "output"} dollars per 1M tokens, or a JSON file (default: tokens only).
        stale_days: a baseline older than this is flagged (default ``REPORT_STALE_DAYS`` = 30).
        stale_commits: ... or this many commits behind (default ``REPORT_STALE_COMMITS`` = 50).
        repo: the git checkout asked for commits behind (default the current folder; None skips it).
        title: the page title (default from the run's name).
        plotlyjs: how the page carries Plotly (default ``REPORT_PLOTLYJS`` = "inline": self-contained, about
            4.8 MB of the page's 4.9). ``"cdn"`` links Plotly's CDN (a page of about 70 kB that needs the
            network to draw its plots); ``"directory"`` writes one ``plotly.min.js`` beside the page and links it
            (many reports in one folder share it); a URL or path ending in ``.js`` links a copy you host.

    Returns:
        The path written.

    Raises:
        MissingExtra: jinja2 or plotly is not installed (``pip install 'pytest-whileai[report]'``).
        InvalidArgumentType: ``obj`` is none of the inputs above.
        InvalidArgument: ``plotlyjs`` is none of the forms above.

    Example::

        scored = data.grade(judge=my_judge)
        wai.report(scored, "report.html", baseline=last_weeks_scored)
    """
    from whileai_core.rows import atomic_write_text

    text = render(obj, baseline=baseline, gate=gate, by=by, level=level, prices=prices, stale_days=stale_days,
                  stale_commits=stale_commits, repo=repo, title=title, plotlyjs=plotlyjs, path=path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return Path(atomic_write_text(os.fspath(path), text, overwrite=True))
