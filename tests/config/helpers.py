"""Shared text of the config tests."""

MINIMAL = '[scripts]\nenv = "env.py"\nagent = "agent.py"\n'
"""The smallest valid config (with env.py and agent.py next to it)."""
