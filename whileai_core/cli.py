"""The ``whileai`` command: ``whileai quickstart``, ``whileai defaults``, ``whileai gate``, ``whileai serve``,
``whileai version``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _defaults() -> int:
    import inspect

    from whileai_core import defaults

    source = inspect.getsource(defaults).splitlines()
    for line in source:
        stripped = line.strip()
        if stripped and stripped[0].isupper() and "=" in stripped.split("#")[0]:
            print(stripped)
    return 0


def _gate(baseline: str, current: str, *, max_drop: float | None, alpha: float | None) -> int:
    from whileai_core.errors import BaselineError
    from whileai_core.gate.compare import compare_documents
    from whileai_core.gate.document import load_document

    kwargs = {k: v for k, v in (("max_drop", max_drop), ("alpha", alpha)) if v is not None}
    try:
        verdict = compare_documents(load_document(baseline), load_document(current),
                                    baseline_name=baseline, current_name=current, **kwargs)
    except (OSError, ValueError, BaselineError) as exc:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="whileai", description="whileai: simulate, grade, measure, select, "
                                     "guard, train, prove. Offline by default.")
    sub = parser.add_subparsers(dest="command", required=True)
    qs = sub.add_parser("quickstart", help="run the offline loop from the docs (no key, no network)")
    qs.add_argument("--dir", default=None, help="where to write train.jsonl (default: a new temp dir)")
    sub.add_parser("defaults", help="print every constant the engine uses, with its source")
    sub.add_parser("version", help="print the installed version")
    gate = sub.add_parser("gate", help="the CI regression gate between two stored run documents "
                          "(exit 1 on a significant drop)")
    gate.add_argument("baseline", help="the baseline run document (e.g. .whileai/baselines/main.json)")
    gate.add_argument("current", help="the run document to judge")
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
    args = parser.parse_args(argv)
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
        return _gate(args.baseline, args.current, max_drop=args.max_drop, alpha=args.alpha)
    import whileai

    print(whileai.__version__)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
