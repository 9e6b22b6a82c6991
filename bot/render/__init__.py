"""Renderers of a gate report: JSON (DESIGN 3.6), SARIF 2.1.0 and text for a terminal."""

from bot.render.as_json import report_to_dict, report_to_json
from bot.render.sarif import report_to_sarif
from bot.render.text import report_to_text

__all__ = ["report_to_dict", "report_to_json", "report_to_sarif", "report_to_text"]
