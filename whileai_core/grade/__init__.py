"""Grade: judges (programs, verifiers, LLMs) turn rows into rewards; judge_trust checks the judge.
"""
