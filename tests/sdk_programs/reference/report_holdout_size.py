# SDK reference: report holdout size
import whileai as wai

rep = wai.holdout_size(0.1, base=0.6, k=4)
assert rep["n_tasks"] > 0 and rep["task_std"] > 0 and "notes" in rep
