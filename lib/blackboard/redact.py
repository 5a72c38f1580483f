"""Replace secrets (API keys, tokens, private keys) with ``[REDACTED]`` before text leaves a board."""

REDACTED = "[REDACTED]"
_PATTERNS = [
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    r"\bsk-ant-[A-Za-z0-9_-]{16,}",
    # OpenAI and the many keys shaped like it (sk-proj-, sk-svcacct-, hex bodies). A key has a
    # digit or a capital somewhere; a lower-case slug such as a path or branch `sk-some-name` has not.
    r"\bsk-(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\bnpm_[A-Za-z0-9]{36,}",
    r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    r"(?i:aws_secret_access_key)[\s\"']*[=:][\s\"']*[A-Za-z0-9/+=]{40}",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bxapp-[A-Za-z0-9-]{10,}",
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bwhsec_[A-Za-z0-9]{20,}",
    r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",  # not \b: a key may end in '-'
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT, even without Bearer
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
    "glpat-",
    "npm_",
    "pypi-",
    "akia",
    "asia",
    "aws_secret_access_key",
    "xox",
    "xapp-",
    "hooks.slack.com",
    "_live_",
    "_test_",
    "whsec_",
    "aiza",
    "eyj",
    "bearer",
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``."""
    lowered = text.lower()
    if not any(marker in lowered for marker in _MARKERS):
        return text
    import re  # only for text with a marker: a hook with nothing to redact never imports it

    return re.sub(_SECRET, REDACTED, text)
