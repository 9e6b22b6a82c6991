"""Ichor Bot: guards GitTarget paths with the acceptance gate and ``.gittargetignore`` checks."""

__version__ = "0.1.0"
# The project's repository, as the README's install lines name it ("OWNER: where your copy
# lives"): nothing else names it, so a fork sets ICHOR_DOCS_URL for its SARIF links.
PROJECT_URL = "https://github.com/OWNER/ichor-bot"
