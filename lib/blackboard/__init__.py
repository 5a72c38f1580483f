"""blackboard: a per-session blackboard for Claude Code sessions and their subagents."""

__version__ = "0.1.0"
