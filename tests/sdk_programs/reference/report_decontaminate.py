# SDK reference: report decontaminate
import whileai as wai

t = wai.rows(["Where is order A1001 right now please tell me the status of it today"], ["It shipped."])
clean, rep = wai.decontaminate(t, t)
assert rep["n_contaminated"] == 1 and rep["contamination_rate"] == 1.0 and clean == []
