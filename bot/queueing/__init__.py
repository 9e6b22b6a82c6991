"""Where verified deliveries go: RQ on Redis, or an in-process queue, with a local spool."""
