# SDK reference: verify multiple choice
import whileai as wai

assert wai.verify.MultipleChoice()({"final_text": "Answer: B", "reference": "B"})["reward"] == 1
