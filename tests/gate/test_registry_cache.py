"""Type registries carried from one gate run to the next by an object its owner holds."""

from __future__ import annotations

from bot.gate.run import RegistryCache
from bot.registry.capabilities import Capabilities


def test_the_same_sources_reuse_their_registry() -> None:
    cache = RegistryCache()
    empty = cache.get((), None)
    assert cache.get((), None) is empty
    served = cache.get((), Capabilities(()))
    assert served is not empty and cache.get((), Capabilities(())) is served


def test_the_cache_is_bounded_and_the_oldest_goes_first() -> None:
    cache = RegistryCache(size=1)
    first = cache.get((), None)
    cache.get((), Capabilities(()))
    assert cache.get((), None) is not first
