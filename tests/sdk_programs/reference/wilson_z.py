# SDK reference: wilson z
import whileai as wai

lo, hi = wai.wilson_interval(45, 50, z=1.96)
assert round(lo, 3) == 0.786 and round(hi, 3) == 0.957
