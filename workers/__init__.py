"""RQ job entry points: importable functions taking JSON-safe arguments."""
