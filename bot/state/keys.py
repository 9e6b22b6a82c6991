"""Every Redis key the bot names, in one place: the stores in this package and the queue's own
records (``bot/queueing/``) take their names from here, so two stores never meet on a key and a
deployed Redis's keys are read the same after any move of code. RQ's own keys (``rq:…``) are
RQ's and are not named here.

Names and formats are data: changing one strands what a running installation wrote.
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "ichor:"

# Newest head per pull request (a sorted set) and the counter that orders them.
HEAD_SEQUENCE: Final = "ichor:heads-sequence"
NO_HEAD: Final = "ichor:heads:-"  # a placeholder the submit script names, never written
# The audit trail (a capped stream).
AUDIT_STREAM: Final = "ichor:audit"
# The repository lock of the change engine and the onboarding job.
REPO_LOCK_PREFIX: Final = "ichor:repo-lock:"


def head(pull: str) -> str:
    return f"ichor:heads:{pull}"


def checked(pull: str) -> str:
    """The heads of a pull request whose check ended (a set)."""
    return f"ichor:checked:{pull}"


def line_comments(pull: str) -> str:
    return f"ichor:line-comments:{pull}"


def approvals(pull: str) -> str:
    return f"ichor:approvals:{pull}"


def shown(pull: str) -> str:
    """The checks published for a pull request and what each showed as waiting."""
    return f"ichor:shown:{pull}"


def permission(forge: str, repo: str, user: str) -> str:
    return f"ichor:permission:{forge}:{repo}:{user}"


def onboarding_proposed(repo_key: str) -> str:
    return f"ichor:onboarding:proposed:{repo_key}"


def onboarding_declined(repo_key: str) -> str:
    return f"ichor:onboarding:declined:{repo_key}"


def history(namespace: str) -> str:
    """The prefix of the status page's deliveries, checks and job outcomes of one queue."""
    return f"ichor:history:{namespace}"


def rate_budgets(namespace: str) -> str:
    """The rate limits the forges last reported, per forge and bucket (a hash)."""
    return f"{history(namespace)}:rates"


def reconciled(namespace: str) -> str:
    """The reconciler's last look at each repository (a hash: forge|repository → JSON)."""
    return f"{history(namespace)}:reconciled"


def reconcile_listings(namespace: str) -> str:
    """What the reconciler keeps of each repository between runs (a hash, as above)."""
    return f"{history(namespace)}:reconcile-listings"


def sweep_runs(namespace: str) -> str:
    """Each forge's last sweep (a hash: forge → JSON)."""
    return f"{history(namespace)}:sweeps"


def sweep_counts(namespace: str) -> str:
    """What the sweeps did, counted (a hash: forge|what → count; /metrics)."""
    return f"{history(namespace)}:sweep-counts"


def sweep_lock(queue_name: str) -> str:
    """Held for one interval by the worker that queued the sweep (SET NX EX)."""
    return f"ichor:sweep-lock:{queue_name}"


def redelivery_asked(guid: str) -> str:
    """A GitHub delivery asked for again lately (not asked again while it lives)."""
    return f"ichor:redelivery-asked:{guid}"


# The queue's records (bot/queueing/): dedupe, attempts and the recovery of abandoned jobs.


def delivery(job_id: str) -> str:
    """Set once per delivery (``SET NX``): only the delivery that sets it is queued."""
    return f"ichor:delivery:{job_id}"


def attempts(job_id: str) -> str:
    return f"ichor:attempts:{job_id}"


def running(job_id: str) -> str:
    """The lease of the worker running a job."""
    return f"ichor:running:{job_id}"


def reaper(queue_name: str) -> str:
    return f"ichor:reaper:{queue_name}"


def unleased(job_id: str) -> str:
    return f"ichor:unleased:{job_id}"


def unclaimed(job_id: str) -> str:
    return f"ichor:unclaimed:{job_id}"


# The GitHub App manifest flow's states (bot/web/setup_states.py), shared by web replicas.


def setup_key(namespace: str) -> str:
    """The key every web process signs the flow's states with."""
    return f"ichor:setup-key:{namespace}"


def setup_spent(namespace: str, nonce: str) -> str:
    """Set once a state is spent, until it would have expired."""
    return f"ichor:setup-spent:{namespace}:{nonce}"
