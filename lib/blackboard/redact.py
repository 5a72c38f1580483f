"""Replace secrets (API keys, tokens, private keys) with ``[REDACTED]`` before text leaves a board."""

import re

REDACTED = "[REDACTED]"
_PATTERNS = [
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    r"\bsk-ant-[A-Za-z0-9_-]{16,}",
    r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}",
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bwhsec_[A-Za-z0-9]{20,}",
    r"\bAIza[0-9A-Za-z_-]{35}\b",
    r"\b(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}",
]
_SECRET = "|".join(f"(?:{p})" for p in _PATTERNS)
# Every pattern contains one of these (compared in lower case); text with none of them
# skips the regex, which is costly to compile in a hook that runs on every session start.
_MARKERS = (
    "-----begin",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "akia",
    "asia",
    "xox",
    "hooks.slack.com",
    "_live_",
    "_test_",
    "whsec_",
    "aiza",
    "bearer",
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``."""
    lowered = text.lower()
    if not any(marker in lowered for marker in _MARKERS):
        return text
    return re.sub(_SECRET, REDACTED, text)
