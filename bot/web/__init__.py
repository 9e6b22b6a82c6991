"""The web process: webhook ingress, health, metrics and the status page."""
