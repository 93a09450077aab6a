# SDK reference: top level hub
import whileai as wai

assert hasattr(wai.hub, "push")
