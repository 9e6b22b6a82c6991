"""A fake GitHub for end-to-end tests: REST API checked against the recorded OpenAPI
description, installation tokens and app JWTs, fault injection, and git over smart HTTP."""

from tests.fakeforge.github import Call, FakeGitHub, Fault, new_private_key
from tests.fakeforge.openapi import OpenApi, Problem

__all__ = ["Call", "FakeGitHub", "Fault", "OpenApi", "Problem", "new_private_key"]
