"""The real-writer harness: drives nanobot-ai 0.3.5's own code (see ../README.md)."""
