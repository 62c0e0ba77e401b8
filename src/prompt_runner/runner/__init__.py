"""Scheduler, attempt loop, recovery policy, completion policy, agent control."""
