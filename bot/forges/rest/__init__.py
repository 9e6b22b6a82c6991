"""What GitHub's REST API and Gitea's (and Forgejo's), which copies it, say alike: a pull
request's conversation (issue comments, reactions) and its pull requests, written once for the
two adapters.

Each function takes ``send`` (:class:`bot.forges.rest.send.Send`: one request with the
adapter's credentials, every page of a listing with ``pages``) and the repository's API path,
so an adapter keeps its credentials, retries and locks and these modules only what is said.
"""
