# SDK reference: namespace simulations
import whileai.simulations as wai

assert callable(wai.simulate) and callable(wai.pass_at)
