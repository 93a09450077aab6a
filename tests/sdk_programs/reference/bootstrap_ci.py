# SDK reference: bootstrap ci
import whileai as wai

lo, hi = wai.bootstrap_ci([0, 1, 1, 0, 1, 1, 1, 0])
assert 0 <= lo <= hi <= 1
