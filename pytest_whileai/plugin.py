"""pytest11 entry point. Hook implementations live here only (built out in the plugin issue)."""
