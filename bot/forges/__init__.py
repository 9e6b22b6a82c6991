"""Forge adapters: one small protocol (``base.Forge``) and one module per forge."""
