"""Approvals of strict targets' new objects (design.md 5.1): fingerprints, who approved what, and
the hidden marker that lets approvals be rebuilt from the forge's comments. Pure."""
