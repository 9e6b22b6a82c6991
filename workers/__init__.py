"""RQ job entry points: importable functions taking JSON-safe ids (they arrive with ingress)."""
