"""What a session writes and prints: one-line texts of a scenario (``lines``), the terminal table, Markdown
and GitHub annotations (``markdown``), the JUnit XML (``junit``), and the end-of-session writer (``publish``)."""
