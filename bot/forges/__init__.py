"""Forge adapters: one small protocol (``base.ForgeAdapter``) and one module per forge."""
