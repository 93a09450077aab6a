"""The loop in one program: simulate -> grade -> select -> train -> serve -> simulate again -> prove.

    python examples/loop.py                  # builds a tiny Llama from tests/train_helpers.py (this checkout)
    python examples/loop.py --base DIR       # or start from your own small local checkpoint

Needs the train extra (torch, trl, transformers with its serving extra). Offline: nothing is downloaded. The
tiny model learns only the shape of the desk's replies in a few seconds on CPU, which is enough to watch every
step run: the base model never says "shipped", the trained one does, and `prove` measures that on tasks it
never trained on.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import whileai as wai

SYSTEM = "You are the order desk. Answer in one line."
ASKS = [f"Where is my order O{1000 + 37 * i}?" for i in range(40)]


def desk(message: str) -> dict:
    """A stand-in agent: answers most orders, shrugs at every third one."""
    order = re.search(r"O\d+", message).group()
    if int(order[1:]) % 3 == 0:
        return {"steps": [], "final_text": "Sorry, I cannot help with that."}
    return {"steps": [], "final_text": f"Order {order} has shipped."}


def judge(row: dict) -> dict:
    """Pass when the reply tells the customer the order shipped."""
    return {"reward": int("shipped" in row["final_text"])}


def tiny_base(out: Path) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import train_helpers  # sets HF offline variables; builds a ~0.16M-parameter Llama with a chat template

    return str(train_helpers.build_tiny_model(out / "base"))


def main(base: str | None, workdir: Path) -> None:
    base = base or tiny_base(workdir)
    # 1. simulate: the stand-in agent answers every ask four times
    data = wai.simulate(desk, asks=ASKS, system_prompt=SYSTEM, repeats=4, budget=4 * len(ASKS))
    # 2. grade
    scored = data.grade(judge=judge)
    print("stand-in agent:", scored.pass_at)
    # 3. select: hold out whole tasks, keep the passing replies for SFT
    train_rows, hold_rows = wai.holdout(scored.rows, fraction=0.25)
    sft_rows = wai.select(train_rows, mode="sft")
    # 4. train: SFT on the tiny local model (CPU, seconds)
    result = wai.train(sft_rows, "sft", model=base, output_dir=str(workdir / "sft"), max_steps=60,
                       learning_rate=5e-3, trainer_args={"logging_steps": 20})
    print(result)
    # 5. serve the trained checkpoint behind an OpenAI-compatible server on 127.0.0.1
    with wai.serve(result, engine="transformers") as server:
        print("serving at", server.url)
        # 6. simulate against the served endpoint: the held-out asks, played by the trained model
        held_asks = sorted({row["prompt"] for row in hold_rows})
        again = wai.simulate(server.endpoint, asks=held_asks, system_prompt=SYSTEM, repeats=1, max_turns=1)
        print("served model:", again.grade(judge=judge).pass_at)
        # 7. prove: the base checkpoint against the served model on the holdout, paired by task
        report = wai.prove(base, server.endpoint, hold_rows, judge, train_rows=train_rows, max_new_tokens=32)
        print(report)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=None, help="a local base checkpoint (default: build the tiny one)")
    parser.add_argument("--dir", default=None, help="where checkpoints go (default: a new temp dir)")
    args = parser.parse_args()
    main(args.base, Path(args.dir or tempfile.mkdtemp(prefix="whileai-loop-")))
