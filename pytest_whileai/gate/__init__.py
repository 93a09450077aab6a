"""The gate inside pytest: each scenario judged at run time (``scenario``), the baseline store on disk
(``store``), and the suite verdict as a pytest test outcome (``verdict``). The statistics between two runs
live in the engine (``whileai_core.gate``)."""
