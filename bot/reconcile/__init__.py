"""The reconciler's decisions (design.md 7), pure: whether an open pull request's head needs a
check queued (:mod:`.heads`), and the event such a check is queued as (:mod:`.events`). The
sweep that lists, asks and queues is ``workers/reconcile.py``."""
