"""The check of one revision: which targets a change touches, and what it changed (pure)."""
