"""Renderers of a gate report: JSON, SARIF 2.1.0, text for a terminal, brief lines, GitHub."""

from bot.render.as_json import report_to_dict, report_to_json
from bot.render.brief import report_to_brief
from bot.render.github import report_to_github
from bot.render.sarif import report_to_sarif
from bot.render.text import report_to_text

__all__ = [
    "report_to_brief",
    "report_to_dict",
    "report_to_github",
    "report_to_json",
    "report_to_sarif",
    "report_to_text",
]
