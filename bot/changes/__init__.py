"""Change pull requests (design.md 6): the bot's own branches, their commits and their pull
requests. ``branch``, ``body`` and ``safety`` are pure; the engine that fetches, edits, gates,
pushes and opens the pull request is built on them."""
