# SDK reference: verify json
import whileai as wai

v = wai.verify
row = {"final_text": '{"status": "Shipped"}'}
assert v.JSONValid()(row)["reward"] == 1 and v.JSONField("status", equals="shipped")(row)["reward"] == 1
