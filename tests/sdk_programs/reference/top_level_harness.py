# SDK reference: top level harness
import whileai as wai

assert wai.Harness
