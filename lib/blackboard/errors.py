"""The one exception type the library raises for expected failures."""


class BlackboardError(Exception):
    """An expected failure; the message says what went wrong and how to fix it."""
