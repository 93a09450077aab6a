"""Feed traces back: production traces (OpenTelemetry GenAI spans, OpenAI chat-completions logs) as rows.

``wai.traces.load(path)`` reads them into rows that grade, measure, select and export like simulated ones;
``wai.traces.situations(rows, eval_rows=...)`` turns their user messages into situations for
``simulate(traces=...)``. This ``__init__`` re-exports the public names (``wai.traces`` is this namespace).
"""

from whileai_core.traces.load import TraceRows, load
from whileai_core.traces.privacy import redact_strings
from whileai_core.traces.records import LoadReport, Skipped
from whileai_core.traces.situations import TraceSituations, situations

__all__ = ["LoadReport", "Skipped", "TraceRows", "TraceSituations", "load", "redact_strings", "situations"]
