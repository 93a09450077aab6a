# SDK reference: verify numeric
import whileai as wai

assert wai.verify.Numeric()({"final_text": "The answer is \\boxed{42}", "reference": "42"})["reward"] == 1
