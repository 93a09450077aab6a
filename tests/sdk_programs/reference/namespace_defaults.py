# SDK reference: namespace defaults
from whileai.simulations.defaults import BOOTSTRAP_DRAWS, CI_LEVEL, DIFFICULTY_BAND, HACK_THRESHOLD

assert (CI_LEVEL, BOOTSTRAP_DRAWS, tuple(DIFFICULTY_BAND), HACK_THRESHOLD) == (0.95, 2000, (0.2, 0.8), 0.3)
