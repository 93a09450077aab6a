# Program verifiers as judges: exact answers and math equality on plain lists.
import whileai as wai

prompts = ["What is 2 + 2?", "What is 10 / 4?", "Capital of France?", "What is 3 * 3?"]
completions = ["The answer is 4", "It is 2.5", "paris", "9"]
rows = wai.rows(prompts, completions, references=["4", "5/2", "Paris", "10"])
math = rows[:2] + rows[3:]
print("math:", [wai.MathEqual()(r)["reward"] for r in math])
print("exact:", wai.ExactMatch("Paris", case_sensitive=False)(rows[2])["reward"])
