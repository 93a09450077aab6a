# SDK reference: verify as verifier decorator
import whileai as wai


@wai.verify.verifier
def same(candidate, reference):
    return candidate.strip() == reference
assert same({"final_text": " ok", "reference": "ok"})["reward"] == 1
assert wai.verify.as_verifier(lambda row: 1)({"final_text": "x"})["reward"] == 1
