"""The Gitea and Forgejo adapter (:mod:`.adapter`): only what is that forge's own, its payloads and
endpoints, behind :class:`bot.forges.base.ForgeAdapter`."""
