"""Option objects for knobs that travel together (issue 31), accepted beside the keywords they group."""

from whileai_core.options.execution import Execution
from whileai_core.options.merge import with_option
from whileai_core.options.stats import Stats, with_stats
from whileai_core.options.training import Generation, Optim

__all__ = ["Execution", "Generation", "Optim", "Stats", "with_option", "with_stats"]
