"""Onboarding (design.md 6.6): the targets a repository without ``.ichor.yaml`` is offered, and the
pull request that proposes them. Pure: a snapshot in, files and text out."""
