"""Ichor Bot: guards GitTarget paths with the acceptance gate and ``.gittargetignore`` checks."""

__version__ = "0.1.0"
