"""The ``whileai`` command: ``whileai quickstart``, ``whileai defaults``, ``whileai version``."""

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="whileai", description="whileai: simulate, grade, measure, select, "
                                     "guard, train, prove. Offline by default.")
    sub = parser.add_subparsers(dest="command", required=True)
    qs = sub.add_parser("quickstart", help="run the offline loop from the docs (no key, no network)")
    qs.add_argument("--dir", default=None, help="where to write train.jsonl (default: a new temp dir)")
    sub.add_parser("defaults", help="print every constant the engine uses, with its source")
    sub.add_parser("version", help="print the installed version")
    args = parser.parse_args(argv)
    if args.command == "quickstart":
        from whileai_core.quickstart import run

        path = run(args.dir)
        print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.command == "defaults":
        return _defaults()
    import whileai

    print(whileai.__version__)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
