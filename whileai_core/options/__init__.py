"""Option objects for knobs that travel together (issue 31), accepted beside the keywords they group."""

from whileai_core.options.stats import Stats, with_stats

__all__ = ["Stats", "with_stats"]
