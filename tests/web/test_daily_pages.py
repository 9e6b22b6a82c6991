"""The status page's daily-use routes over real HTTP (in process, files): the index's filters,
a repository's page, the auto-refresh and what turns it off, and the check page's issues."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from bot.state.check_facts import CheckFacts, Finding, TargetLine
from bot.state.history import CheckEntry, DeliveryEntry, FileHistory
from tests.web.conftest import Running, Serve

WEB = "https://github.example/acme/gitops"
REFRESH = re.compile(r'<meta http-equiv="refresh" content="(\d+)">')


def _entry(number: int | None, forge: str, repo: str, conclusion: str, at: float) -> CheckEntry:
    target = TargetLine("prod", "clusters/prod", "refused", "accepted", 1, 1, True)
    findings = (
        Finding("prod", "clusters/prod/new.yaml", 2, "error", "plaintext-secret", "new one", True),
        Finding("prod", "clusters/prod/old.txt", None, "error", "foreign-file", "old one", False),
    )
    facts = CheckFacts("feature" if number else "main", (target,), findings, 2)
    return CheckEntry(
        at, forge, repo, number, "ab" * 20, conclusion, f"title {at:.0f}", "*(already on base)*",
        (), 2, "d1", WEB, "", f"{forge}-d{at:.0f}", at - 2.0, facts,
    )  # fmt: skip


def _seeded(serve: Serve, tmp_path: Path, **settings: object) -> Running:
    data = tmp_path / "seeded"
    history = FileHistory(data / "history")
    for number, forge, repo, conclusion, at in (
        (1, "github", "acme/gitops", "failure", 1_700_000_100.0),
        (None, "github", "acme/gitops", "success", 1_700_000_200.0),
        (2, "gitlab", "group/sub/app", "success", 1_700_000_300.0),
    ):
        entry = _entry(number, forge, repo, conclusion, at)
        history.add_check(entry)
        queued = DeliveryEntry(
            at - 2.5, forge, 202, "queued", repository=repo, job_id=entry.job_id
        )  # the job started 0.5 s later and ran 2 s
        history.add_deliveries([queued])
    return serve(redis_url=None, data_dir=data, **settings)


def _get(running: Running, path: str) -> httpx.Response:
    return httpx.get(running.url + path, timeout=30)


def _checks(html: str) -> list[str]:
    part = html.split('<section id="checks">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", part, re.S)[1:]
    return [" ".join(re.sub(r"<[^>]+>", " ", r).split()) for r in rows]


def test_the_index_filters_by_forge_repository_and_verdict(serve: Serve, tmp_path: Path) -> None:
    running = _seeded(serve, tmp_path)
    assert len(_checks(_get(running, "/").text)) == 3
    gitlab = _checks(_get(running, "/?forge=gitlab").text)
    assert len(gitlab) == 1 and "group/sub/app" in gitlab[0]
    failed = _checks(_get(running, "/?verdict=failure&repo=acme/gitops").text)
    assert len(failed) == 1 and "#1 feature" in failed[0] and "✗ failure" in failed[0]
    assert "waited 0.5 s, ran 2.0 s" in failed[0]
    page = _get(running, "/?forge=gitea").text
    assert _checks(page) == ["No check matches these filters."]
    assert '<option value="gitea" selected>gitea</option>' in page
    odd = _get(running, "/?forge=%3Cscript%3E&verdict=x")  # unknown values are "any"
    assert odd.status_code == 200 and len(_checks(odd.text)) == 3 and "<script>" not in odd.text


def test_a_repository_page_and_its_links(serve: Serve, tmp_path: Path) -> None:
    running = _seeded(serve, tmp_path)
    index = _get(running, "/").text
    assert 'href="/repository?forge=gitlab&amp;repo=group%2Fsub%2Fapp"' in index
    page = _get(running, "/repository?forge=github&repo=acme/gitops")
    assert page.status_code == 200
    latest = page.text.split('<section id="latest">', 1)[1].split("</section>", 1)[0]
    assert "#1" in latest and "main" in latest and "group/sub/app" not in page.text
    targets = page.text.split('<section id="targets">', 1)[1].split("</section>", 1)[0]
    assert "prod" in targets and 'href="/checks/' in targets
    assert f'href="{WEB}"' in page.text  # open on the forge
    for missing in ("/repository", "/repository?forge=github", "/repository?forge=x&repo=a/b"):
        assert _get(running, missing).status_code == 404, missing


def test_the_check_page_puts_new_issues_first_and_links_each_line(
    serve: Serve, tmp_path: Path
) -> None:
    running = _seeded(serve, tmp_path)
    entry = _entry(1, "github", "acme/gitops", "failure", 1_700_000_100.0)
    page = _get(running, f"/checks/{entry.id}").text
    new, existing = page.split('<details class="existing">', 1)
    assert "New issues (1)" in new and "clusters/prod/new.yaml:2" in new
    assert f'href="{WEB}/blob/{"ab" * 20}/clusters/prod/new.yaml#L2"' in new
    assert "<summary>1 issue already on base</summary>" in existing
    assert "clusters/prod/old.txt" in existing.split("</details>", 1)[0]
    assert "<em>(already on base)</em>" in page and "*(already" not in page.split("<pre>")[0]
    assert REFRESH.search(page) is None  # a check does not change: no reload


def test_the_auto_refresh_and_what_turns_it_off(serve: Serve, tmp_path: Path) -> None:
    running = _seeded(serve, tmp_path)
    for path in ("/", "/repository?forge=github&repo=acme/gitops"):
        page = _get(running, path).text
        assert (m := REFRESH.search(page)) is not None and m.group(1) == "30", path
        off = re.search(r'<a href="([^"]+)">stop reloading</a>', page)
        assert off is not None and "refresh=0" in off.group(1)
        stopped = _get(running, off.group(1).replace("&amp;", "&")).text
        assert REFRESH.search(stopped) is None and "not reloading" in stopped
    kept = _get(running, "/?forge=gitlab&refresh=0").text
    assert '<input type="hidden" name="refresh" value="0">' in kept  # filtering keeps it off
    assert 'href="/?forge=gitlab">reload every few seconds</a>' in kept
    never = _seeded(serve, tmp_path / "off", status_refresh=0)
    page = _get(never, "/").text
    assert REFRESH.search(page) is None and "reload" not in page.split("</header>")[0]
