"""What the bot remembers about pull requests between deliveries and jobs (not the queue's jobs)."""
