# SDK reference: noise band
import whileai as wai

assert wai.noise_band(0.02, 1, 1, df=4) > 0
