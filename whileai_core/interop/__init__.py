"""Other eval frameworks' result files as whileai rows and run documents (docs/interop.md): inspect_ai logs,
lm-evaluation-harness ``--log_samples`` output, promptfoo's JSON output and deepeval test runs, each read
through its framework's own API where it has one and imported only when used."""
