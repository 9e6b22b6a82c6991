"""Audit records as JSON, for Redis and the audit command. (Approvals and shown checks are
:mod:`bot.approvals.codec`.)"""

from __future__ import annotations

import json
from datetime import datetime

from bot.state.base import AuditRecord


def audit_to_json(record: AuditRecord) -> str:
    data = {k: getattr(record, k) for k in AuditRecord.__dataclass_fields__}
    data["time"] = record.time.isoformat()
    return json.dumps(data, sort_keys=True)


def audit_from_json(text: str) -> AuditRecord:
    data = json.loads(text)
    data["time"] = datetime.fromisoformat(data["time"])
    return AuditRecord(**data)
