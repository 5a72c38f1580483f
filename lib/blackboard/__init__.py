"""blackboard: a per-session blackboard for Claude Code sessions and their subagents.

Its version is declared once, in ``.claude-plugin/plugin.json`` (``environment.plugin_version``).
"""
