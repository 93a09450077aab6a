# How many holdout tasks a 10-point improvement needs at 80% power.
import whileai as wai

size = wai.holdout_size(0.10, base=0.6, k=4, power=0.8, alpha=0.05)
print(size)
