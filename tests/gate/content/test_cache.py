"""The facts cache: content-addressed, in memory and on disk, shared between processes."""

from __future__ import annotations

from pathlib import Path

from bot.gate.content.cache import MemoryFactsCache
from bot.gate.content.facts import extract_facts
from bot.state.facts_disk import DirectoryFactsCache

DATA = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: web}\n"


def test_memory_cache_is_bounded() -> None:
    cache = MemoryFactsCache(max_entries=2)
    facts = extract_facts(DATA)
    for oid in ("a", "b", "c"):
        cache.put(oid, facts)
    assert len(cache) == 2
    assert cache.get("a") is None and cache.get("c") == facts
    clone = cache.copy()
    clone.put("d", facts)
    assert cache.get("d") is None


def test_directory_cache_round_trip(tmp_path: Path) -> None:
    facts = extract_facts(DATA)
    DirectoryFactsCache(tmp_path).put("0" * 40, facts)
    assert DirectoryFactsCache(tmp_path).get("0" * 40) == facts  # another instance, same disk
    assert DirectoryFactsCache(tmp_path).get("1" * 40) is None


def test_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    cache = DirectoryFactsCache(tmp_path)
    cache.put("0" * 40, extract_facts(DATA))
    (entry,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    entry.write_bytes(b"not a pickle")
    assert cache.get("0" * 40) is None


def test_check_with_cache_dir(tmp_path: Path, make_repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"t/a.yaml": DATA.decode()})
    cache = tmp_path / "cache"
    first = run_cli(
        "check", str(repo), "--rev", "HEAD", "--format", "json", "--cache-dir", str(cache)
    )
    assert any(cache.rglob("v*"))
    second = run_cli(
        "check", str(repo), "--rev", "HEAD", "--format", "json", "--cache-dir", str(cache)
    )
    assert first.out == second.out and first.code == second.code == 0
