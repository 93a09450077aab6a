"""The ``whileai`` command (also installed as ``wai``): ``quickstart``, ``defaults``, ``gate``, ``serve``, ``compare``,
``self-check``, ``init-evals`` and ``version``.

Output piped into a reader that stops early (``whileai defaults | head``) ends the command quietly instead of
with a ``BrokenPipeError`` traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _defaults() -> int:
    import inspect

    from whileai_core import defaults

    source = inspect.getsource(defaults).splitlines()
    for line in source:
        stripped = line.strip()
        if stripped and stripped[0].isupper() and "=" in stripped.split("#")[0]:
            print(stripped)
    return 0


def _gate(baseline: str, current: str, *, max_drop: float | None, alpha: float | None, scorer: str | None = None,
          unscored: str | None = None) -> int:
    """Gate two runs: whileai run documents, or any eval framework's result files or folders (docs/interop.md)."""
    from whileai_core.errors import BaselineError, MissingExtra
    from whileai_core.gate.compare import compare_documents
    from whileai_core.interop.load import load_run

    kwargs: dict[str, Any] = {k: v for k, v in (("max_drop", max_drop), ("alpha", alpha)) if v is not None}
    try:
        docs = []
        for path in (baseline, current):
            doc, report = load_run(path, scorer=scorer, policy=unscored)
            if report is not None:
                print(report.summary(), file=sys.stderr)
            docs.append(doc)
        verdict = compare_documents(docs[0], docs[1], baseline_name=baseline, current_name=current, **kwargs)
    except (OSError, ValueError, BaselineError, MissingExtra) as exc:
        print(f"whileai gate: {exc}", file=sys.stderr)
        return 2
    print(verdict)
    return 1 if verdict.red else 0


def _serve(checkpoint: str, *, engine: str, port: int | None, host: str, timeout: float) -> int:
    import signal

    from whileai_core.errors import InvalidArgument, InvalidArgumentType, ServeError
    from whileai_core.serve.server import serve

    def _interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the server as Ctrl-C does

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server = serve(checkpoint, engine=engine, port=port, host=host, timeout_s=timeout)
    except (ServeError, InvalidArgument, InvalidArgumentType) as exc:
        print(f"whileai serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    with server:
        try:
            print(server.url, flush=True)
            for note in server.notes:
                print(f"note: {note}", file=sys.stderr)
            print(f"serving {server.model!r} with {server.engine} (pid {server.pid}); model id for requests: "
                  f"{server.model}; Ctrl-C stops it", file=sys.stderr, flush=True)
            code = server.wait()
        except KeyboardInterrupt:
            return 0
        print(f"whileai serve: the server exited with status {code}\n{server.log_tail()}", file=sys.stderr)
        return 1



def _demo_runs(directory: str) -> tuple[str, str]:
    """Two graded runs of the same tasks saved as JSONL: a stand-in agent before (spoils a third) and after
    (spoils a tenth) a pretend training run; offline, seeded."""
    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        raise NotImplementedError("a declared tool: the mock world answers its calls")

    paths = []
    for name, share in (("before", 1 / 3), ("after", 0.1)):
        data = wai.simulate(wai.seeded_agent([get_order], share=share), tools=[get_order],
                            system_prompt="Help customers with orders.", repeats=4, budget=96)
        scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
        paths.append(str(scored.save(Path(directory) / f"{name}.jsonl", overwrite=True)))
    return paths[0], paths[1]


def _compare(before: str | None, after: str | None, *, demo: bool) -> int:
    from whileai_core.measure.compare import compare
    from whileai_core.rows import read_jsonl

    if demo:
        before, after = _demo_runs(tempfile.mkdtemp(prefix="whileai-compare-"))
        print(f"demo: compared {before} with {after}", file=sys.stderr)
    if before is None or after is None:
        print("whileai compare: give two saved runs (BEFORE.jsonl AFTER.jsonl, graded rows from "
              "scored.save(path)) or --demo", file=sys.stderr)
        return 2
    try:
        result = compare(read_jsonl(before), read_jsonl(after))
    except (OSError, ValueError) as exc:
        print(f"whileai compare: {exc}", file=sys.stderr)
        return 2
    print(result)
    return 0 if result.ok else 1


def _check_steps(directory: str) -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """The offline loop, one named step at a time; each step reads what the earlier ones left in ``state``."""
    def imports(state):
        import whileai as wai

        state["wai"] = wai

        @wai.tool
        def get_order(order_id: str) -> dict:
            """Look up an order by id."""
            raise NotImplementedError("a declared tool: the mock world answers its calls")

        state["tools"] = [get_order]

    def simulate(state):
        wai = state["wai"]
        state["data"] = wai.simulate(wai.seeded_agent(state["tools"]), tools=state["tools"],
                                     system_prompt="Help customers with orders.", mode="rl", repeats=4, budget=32)
        assert len(state["data"]) == 32, f"expected 32 rows, got {len(state['data'])}"

    def grade(state):
        state["scored"] = state["data"].grade(judge=lambda row: {"reward": int(not row["seeded"])})

    def measure(state):
        p = state["scored"].pass_at
        assert 0.0 < p.pass_at_1 < 1.0, f"pass@1 {p.pass_at_1} is not between 0 and 1"
        return f"{str(p).split(' | ')[0]} (n={len(state['scored'].rows)} rows)"

    def select_export(state):
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):  # the selection prints its report; one line here
            rows = state["scored"].select(mode="rl")
        report = rows.export(os.path.join(directory, "train.jsonl"))
        assert report["n_written"] == len(rows) > 0, f"wrote {report['n_written']} of {len(rows)} selected rows"
        return f"kept {len(rows)} of {len(state['scored'].rows)} rows, wrote {report['n_written']} to train.jsonl"

    return [("import whileai", imports), ("simulate (offline, seeded agent)", simulate), ("grade", grade),
            ("measure pass@k with intervals", measure), ("select and export", select_export)]


def _self_check() -> int:
    """Run the offline loop step by step; print each step ok or FAILED; exit 1 when one failed."""
    state: dict[str, Any] = {}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="whileai-self-check-") as directory:
        for name, step in _check_steps(directory):
            if failed:
                print(f"skipped  {name} (an earlier step failed)")
                continue
            try:
                said = step(state)
            except Exception as exc:  # noqa: BLE001 - each failure is reported by name, then the exit code says so
                failed += 1
                print(f"FAILED   {name}: {type(exc).__name__}: {exc}")
            else:
                print(f"ok       {name}" + (f": {said}" if said else ""))
    print("self-check: " + ("the offline loop works" if not failed else "FAILED (see above)"))
    return 1 if failed else 0


def _init_evals(args: argparse.Namespace) -> int:
    from whileai_core.errors import WaiError
    from whileai_core.init_evals import init_evals

    try:
        written = init_evals(args.agent, args.tools, system_prompt=args.system_prompt, root=args.root,
                             directory=args.dir, trials=args.trials, force=args.force)
    except (WaiError, OSError) as exc:
        print(f"whileai init-evals: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(f"next:\n  pytest {args.dir}/test_judge.py\n  pytest {args.dir}\n  pytest {args.dir} --wai-save=main")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "whileai",
                                     description="whileai: simulate, grade, measure, select, guard, train, prove. "
                                     "Offline by default.")
    sub = parser.add_subparsers(dest="command", required=True)
    qs = sub.add_parser("quickstart", help="run the offline loop from the docs (no key, no network)")
    qs.add_argument("--dir", default=None, help="where to write train.jsonl (default: a new temp dir)")
    sub.add_parser("defaults", help="print every constant the engine uses, with its source")
    sub.add_parser("version", help="print the installed version")
    sub.add_parser("self-check", help="run the offline loop step by step to check this install (exit 1 on a "
                   "failed step)")
    gate = sub.add_parser("gate", help="the CI regression gate between two runs: whileai run documents, or "
                          "inspect_ai / lm-eval / promptfoo / deepeval result files or folders (exit 1 on a significant drop)")
    gate.add_argument("baseline", help="the baseline: a run document (e.g. .whileai/baselines/main.json) or an eval "
                      "framework's results (file or folder, format detected)")
    gate.add_argument("current", help="the run to judge (same kinds)")
    gate.add_argument("--scorer", default=None, help="imported results: which score to read (inspect scorer name, "
                      "lm-eval metric[,filter], promptfoo score or metric, deepeval metric[:score])")
    gate.add_argument("--unscored", default=None, choices=("fail", "incomplete", "drop"),
                      help="imported results: what an unscored trial counts as (default fail)")
    gate.add_argument("--max-drop", type=float, default=None, help="smallest pass@1 drop that can fail the gate")
    gate.add_argument("--alpha", type=float, default=None, help="significance level of the gate")
    srv = sub.add_parser("serve", help="serve a local checkpoint behind an OpenAI-compatible server until Ctrl-C "
                         "(prints its base URL)")
    srv.add_argument("checkpoint", help="a checkpoint directory (full weights or a LoRA adapter on a local base)")
    srv.add_argument("--engine", default="auto", choices=("auto", "transformers", "vllm"),
                     help="auto: vLLM when installed and a GPU is visible, else transformers serve")
    srv.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
    srv.add_argument("--host", default=None, help="bind address (default 127.0.0.1; anything else is warned about)")
    srv.add_argument("--timeout", type=float, default=None, help="seconds to wait for the server to answer")
    cmp = sub.add_parser("compare", help="compare two saved graded runs (paired by task; exit 1 when worse)")
    cmp.add_argument("before", nargs="?", help="graded rows of the first run (JSONL, scored.save(path))")
    cmp.add_argument("after", nargs="?", help="graded rows of the second run")
    cmp.add_argument("--demo", action="store_true", help="make two offline runs and compare them")
    ie = sub.add_parser("init-evals", help="write a pytest eval suite for your agent (green on its first run)")
    ie.add_argument("--agent", required=True, help="module:callable, your agent(message)")
    ie.add_argument("--tools", default=None, help="module:NAME, your agent's tool list (omit it for an agent built "
                    "on a framework: its own tools are read from it)")
    ie.add_argument("--system-prompt", default=None, help="module:NAME, your agent's system prompt")
    ie.add_argument("--dir", default="evals", help="the folder to write (default evals)")
    ie.add_argument("--root", default=".", help="the project root, where the modules live (default .)")
    ie.add_argument("--trials", type=int, default=4, help="trials per scenario (default 4)")
    ie.add_argument("--force", action="store_true", help="overwrite files that exist")
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "quickstart":
        from whileai_core.quickstart import run

        path = run(args.dir)
        print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.command == "defaults":
        return _defaults()
    if args.command == "serve":
        from whileai_core import defaults

        return _serve(args.checkpoint, engine=args.engine, port=args.port, host=args.host or defaults.SERVE_HOST,
                      timeout=args.timeout or defaults.SERVE_START_TIMEOUT_S)
    if args.command == "gate":
        return _gate(args.baseline, args.current, max_drop=args.max_drop, alpha=args.alpha, scorer=args.scorer,
                     unscored=args.unscored)
    if args.command == "compare":
        return _compare(args.before, args.after, demo=args.demo)
    if args.command == "self-check":
        return _self_check()
    if args.command == "init-evals":
        return _init_evals(args)
    import whileai

    print(whileai.__version__)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``whileai`` / ``wai`` console script; returns the exit code."""
    try:
        code = _run(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped early (`| head`): point stdout at devnull so the interpreter's final flush is
        # quiet too (the recipe in the Python docs, "Note on SIGPIPE")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
