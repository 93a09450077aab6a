# SDK reference: verify combinators
import whileai as wai

v = wai.verify
row = {"final_text": "42", "reference": "42"}
assert v.All([v.ExactMatch(), v.Numeric()])(row)["reward"] == 1 and v.Any([v.Regex("x"), v.Numeric()])(row)["reward"] == 1
assert v.Weighted([(v.Regex("x"), 1), (v.Numeric(), 1)])(row)["reward"] == 0.5
