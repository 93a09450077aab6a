"""The ``whileai`` command: ``whileai quickstart``, ``whileai defaults``, ``whileai gate``, ``whileai version``."""

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
    args = parser.parse_args(argv)
    if args.command == "quickstart":
        from whileai_core.quickstart import run

        path = run(args.dir)
        print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.command == "defaults":
        return _defaults()
    if args.command == "gate":
        return _gate(args.baseline, args.current, max_drop=args.max_drop, alpha=args.alpha)
    import whileai

    print(whileai.__version__)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
