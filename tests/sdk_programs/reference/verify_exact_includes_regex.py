# SDK reference: verify exact includes regex
import whileai as wai

v = wai.verify
row = {"final_text": "Paris", "reference": "Paris"}
assert v.ExactMatch()(row)["reward"] == 1 and v.Includes()(row)["reward"] == 1 and v.Regex(r"^Par")(row)["reward"] == 1
