"""Replace secrets with ``[REDACTED]`` wherever text leaves the board (docs/adr/0016-secrets.md).

Two kinds of patterns, written from the providers' published formats: tokens whose whole
match is the secret (``ghp_…``, ``AKIA…``, private key blocks), and values whose
surroundings stay readable (``PASSWORD=[REDACTED]``, ``postgres://app:[REDACTED]@db``).
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

TOKENS = [
    # A key block up to its END line; without one, its header and the key's own lines that follow
    # (RFC 1421 headers, base64 rows): a broken block costs only itself, not the rest of the text.
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,16384}?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:\r?\n(?:[A-Za-z0-9+/]+={0,2}\r?(?=\n|\Z)|[A-Za-z-]+: [^\n]*|(?=\r?\n[A-Za-z0-9+/]{20,})))*)",
    r"\bsk-ant-[A-Za-z0-9_-]{16,}",
    # OpenAI and the keys shaped like it: a slug such as a branch `sk-learn-upgrade` is short,
    # or has no digit or capital; a key is long, or has them.
    r"\bsk-(?:[A-Za-z0-9_-]{40,}|(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,})",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\bglrt-[A-Za-z0-9_-]{20,}",  # GitLab runner authentication token
    r"\bGR1348941[A-Za-z0-9_-]{20,}",  # GitLab runner registration token
    r"\bnpm_[A-Za-z0-9]{36,}",
    r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    r"(?i:aws_secret_access_key)[\s\"']*[=:][\s\"']*[A-Za-z0-9/+=]{40}",
    r"\bxox[abposr]-[0-9]{6,}-[A-Za-z0-9-]{10,}",  # Slack: digits first, unlike a name `xoxb-slack-bot`
    r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bwhsec_[A-Za-z0-9]{20,}",
    r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",  # not \b: a key may end in '-'
    r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",  # SendGrid
    r"\bdo[opr]_v1_[a-f0-9]{64}\b",  # DigitalOcean
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT, even without Bearer
    r"\b(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}",
]
# Each has a group ``s``, the secret; the rest of the match stays.
VALUES = [
    r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]+:(?P<s>[^\s/?#@]+)@",  # https://user:pass@host, postgres://…
    # https://TOKEN@host: a user part that long is a token (Azure DevOps and GitHub PATs), not a name
    r"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<s>[A-Za-z0-9_.~+-]{20,})@",
    r"[?&](?i:token|access_token|key|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)"
    r"=(?P<s>[^&\s#\"']{8,})",  # credentials in a URL's query
    # .env assignments: PASSWORD=…, API_KEY=…, SECRET_KEY=…, GITHUB_TOKEN=… (a value with a letter, 6+ long)
    r"(?<![A-Za-z0-9_])(?i:[A-Za-z0-9_]*(?:password|passwd|secret|token|api_?key|access_?key|private_?key|"
    r"credentials?)[A-Za-z0-9_]*)[ \t]*=[ \t]*[\"']?(?!\[REDACTED\])(?P<s>(?=[^\s\"'&;,]*[A-Za-z])[^\s\"'&;,]{6,})",
    r"(?i:authorization)[\"']?[ \t]*:[ \t]*(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/=]{8,})",
    r"(?i:_authToken)[ \t]*=[ \t]*(?P<s>[^\s\"']+)",  # .npmrc
    r"(?i:AccountKey)=(?P<s>[A-Za-z0-9+/=]{20,})",  # Azure storage connection strings
    r"[?&](?i:sig)=(?P<s>[A-Za-z0-9%+/=]{10,})",  # Azure SAS
    r"(?m)^[^:\s]+:(?:[0-9]+|\*):[^:\s]+:[^:\s]+:(?P<s>\S+)$",  # .pgpass: host:port:database:user:password
    r"\bmysql(?:dump|admin)?\b[^\n]*?[ \t]-p(?P<s>[^\s-]\S*)",  # mysql -pSECRET
]
# Every pattern's match holds one of these (compared in lower case), or is a .pgpass line:
# text with neither is returned as it is, without compiling or running the patterns.
MARKERS = (
    "-----begin",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "glrt-",
    "gr1348941",
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
    "hf_",
    "sg.",
    "_v1_",
    "eyj",
    "bearer",
    "://",
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "accesskey",
    "private_key",
    "privatekey",
    "credential",
    "authorization",
    "_authtoken",
    "accountkey",
    "sig=",
    "key=",
    "signature=",
    "x-amz-",
    "mysql",
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``."""
    lowered = text.lower()
    if not any(marker in lowered for marker in MARKERS) and not _has_pgpass_line(text):
        return text
    text = re.sub("|".join(f"(?:{pattern})" for pattern in TOKENS), REDACTED, text)
    for pattern in VALUES:
        text = re.sub(pattern, _keep_all_but_the_secret, text)
    return text


SECRET_MARGIN = 512  # longer than any token the patterns take whole, bar key blocks (matched to the cut)


def redact_prefix(text: str, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters from the start of ``text``, redacted, and whether some were left out.

    Redacting first and cutting after would read the whole text; cutting first would leave a
    token crossing the cut half shown. So ``SECRET_MARGIN`` more is redacted, and a text that
    went on past that never shows its last ``SECRET_MARGIN`` redacted characters, where half a
    token may sit (redaction shortens what comes before it).
    """
    longer = len(text) > limit + SECRET_MARGIN
    redacted = redact(text[: limit + SECRET_MARGIN])
    if longer:
        redacted = redacted[: max(len(redacted) - SECRET_MARGIN, 0)]
    return (redacted, longer) if len(redacted) <= limit else (redacted[:limit], True)


def _keep_all_but_the_secret(match: re.Match[str]) -> str:
    start, end = match.span("s")
    return match.group(0)[: start - match.start()] + REDACTED + match.group(0)[end - match.start() :]


def _has_pgpass_line(text: str) -> bool:
    """Whether a line could be .pgpass's ``host:port:database:user:password``.

    Its first four fields are never empty and hold no blank. A board's own lines, such as
    ``- 2026-11-24T10:07:45Z (main): note: …``, have four colons too, but blanks between them.
    """
    if text.count(":") < 4:
        return False
    for line in text.split("\n"):
        fields = line.split(":", 4)
        if len(fields) == 5 and all(field and not any(c.isspace() for c in field) for field in fields[:4]):
            return True
    return False
