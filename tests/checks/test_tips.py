"""Reading a branch's tip and its ``.ichor.yaml``: the one helper every job uses."""

from __future__ import annotations

import pytest

from bot.checks.tips import branch_tip, config_at
from bot.checks.trees import local_tree
from bot.errors import GitStoreError
from tests.conftest import MakeRepo


def test_the_tip_and_the_configuration_there(make_repo: MakeRepo) -> None:
    repo = make_repo({"prod/a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"})
    with local_tree(str(repo)) as tree:
        tip = branch_tip(tree, None, "main")
        result = config_at(tree, None, tip)
    assert len(tip) == 40
    assert result.config is not None and [t.name for t in result.config.targets]


def test_a_missing_branch_is_named_as_the_caller_calls_it(make_repo: MakeRepo) -> None:
    repo = make_repo({"README.md": "hi\n"})
    with local_tree(str(repo)) as tree, pytest.raises(GitStoreError) as raised:
        branch_tip(tree, None, "gone", named="base branch")
    assert str(raised.value) == "the base branch 'gone' could not be fetched"
