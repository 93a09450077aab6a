"""pytest plugin for whileai: agent scenarios as tests, and a paired regression gate against a stored baseline."""
