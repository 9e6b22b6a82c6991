"""CODEOWNERS read as the forges read it: the last matching line decides (a directory line
above a path counts), GitLab's sections each contribute, and hostile files stay bounded."""

from __future__ import annotations

from bot.approvals.codeowners import MAX_RULES, parse_codeowners

FILE = b"""# comment
*                       @root-owner
clusters/prod/          @alice @org/platform someone@example.com
clusters/prod/web.yaml
/apps/*.yaml            @bob
!clusters/prod/x.yaml   @mallory
"""


def test_the_last_matching_line_decides() -> None:
    owners = parse_codeowners(FILE, ".github/CODEOWNERS")
    assert owners.owners_of("README.md") == ("root-owner",)
    # A directory line below the catch-all wins over it, for every file beneath.
    assert owners.owners_of("clusters/prod/v1/a.yaml") == ("alice", "org/platform")
    assert owners.owners_of("clusters/prod/web.yaml") == ()  # a line without owners: unowned
    assert owners.owners_of("apps/x.yaml") == ("bob",)
    assert owners.owners_of("apps/sub/x.yaml") == ("root-owner",)  # anchored, one level
    # Negation is not CODEOWNERS syntax: that line is skipped, mallory owns nothing.
    assert owners.owners_of("clusters/prod/x.yaml") == ("alice", "org/platform")


def test_gitlab_sections_each_name_owners() -> None:
    text = b"clusters/ @alice\n[Infra]\nclusters/prod/ @carol\n^[Optional][2] @dave\n*.md @erin\n"
    owners = parse_codeowners(text, ".gitlab/CODEOWNERS")
    assert owners.owners_of("clusters/prod/a.yaml") == ("alice", "carol")
    assert owners.owners_of("docs/x.md") == ("erin",)


def test_hostile_files_are_bounded_and_say_why() -> None:
    huge = parse_codeowners(b"* @a\n" * (MAX_RULES + 1), ".github/CODEOWNERS")
    assert huge.problem == f"it has more than {MAX_RULES:,} rules"
    assert huge.owners_of("x") == ()
    big = parse_codeowners(b"#" * ((3 << 20) + 1), ".github/CODEOWNERS")
    assert big.problem == "it is over 3 MB"
    # Patterns that backtrack in a naive matcher are matched in linear time here.
    nasty = parse_codeowners(b"*a*a*a*a*a*a*a*a*a*a*b @x\n", ".github/CODEOWNERS")
    assert nasty.owners_of("a" * 5000) == ()
