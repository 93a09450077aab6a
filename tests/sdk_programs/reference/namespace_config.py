# SDK reference: namespace config
from whileai.config import context, settings

with context(judge=lambda row: 1):
    pass
print(settings)
