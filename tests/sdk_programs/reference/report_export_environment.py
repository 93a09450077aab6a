# SDK reference: export_environment's report (a read-only mapping)
import pathlib
import sys

import whileai as wai

pathlib.Path("my_judge.py").write_text("def judge(row):\n    return int(row.get('final_text') == '4')\n")
sys.path.insert(0, ".")
from my_judge import judge

rows = [dict(r, reward=1) for r in wai.rows(["What is 2+2?", "What is 3+3?"], ["4", "6"])]
rep = wai.export_environment(rows, "env", judge=judge)
assert rep["n_train"] + rep["n_holdout"] == 2
