"""Replace secrets with ``[REDACTED]`` wherever text leaves the board (docs/adr/0016-secrets.md, 0023).

Two kinds of patterns, written from the providers' published formats: tokens whose whole match is
the secret (``ghp_…``, ``AKIA…``, private key blocks, password hashes), and values whose surroundings
stay readable (``password: [REDACTED]``, ``postgres://app:[REDACTED]@db``).

Each pattern comes with a marker, text that every one of its matches holds (compared in lower
case). A pattern whose marker is not in the text is neither compiled nor run: a hook makes one call,
and compiling every pattern would cost it more than running the few its text can match. Patterns
that start at a name (``password: …``) run only on the lines that hold a word naming a secret.

Besides whose a secret is, what any secret looks like (issue 39): a name in any style, a value that
``looks_random`` under a weaker name, a prefix and separator before a random run or a random run
alone (``RANDOM_RUN``), key bodies without armour, hash dumps, logins on command lines and
passwords in prose. The whole text is redacted, however long, before anything cuts it.
"""

from __future__ import annotations

import binascii
import itertools
import math
import re
from collections import Counter

from .secret_shapes import NAMED_VALUES, SECRET_WORDS, TOKENS, VALUES

REDACTED = "[REDACTED]"


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``.

    Passes repeat until one changes nothing: a secret replaced can join what was around it
    into another (a JDBC password's ``://`` swallowed leaves ``db:…@host``, a URL
    credential), and redacting a redacted text must change nothing. A text without a
    secret takes one pass, one with secrets usually two.
    """
    for _ in range(MAX_PASSES):
        redacted = _redact_once(text)
        if redacted == text:
            break
        text = redacted
    return text


# Past the cut, this much more is redacted with what is shown, so a secret that starts before it is read
# whole: a token, a line; and when a key block opens before the cut, the block (a few KiB at most).
MARGIN = 512
CONTEXT_CHARS = 64 * 1024
MAX_PASSES = 8  # each pass that changes something replaces at least one secret with the marker


def _redact_once(text: str) -> str:
    lines = _apply(VALUES, _apply(TOKENS, text)).split("\n")
    runs = itertools.groupby(lines, key=_names_a_secret)  # consecutive lines that do, or do not
    return "\n".join(_apply(NAMED_VALUES, "\n".join(run)) if named else "\n".join(run) for named, run in runs)


def redact_remote(text: str) -> str:
    """``redact``, and every URL's user part but ``git@`` as well: for showing a git remote.

    A remote's user part is a credential more often than a name (``https://TOKEN@dev.azure.com``),
    whatever its length or alphabet, and a person never needs to see it to know the remote.
    """
    user = r"(\b[A-Za-z][A-Za-z0-9+.-]*://)(?!git@[^\s/?#@]*(?:[/?#\s]|$))[^\s/?#]+@"  # the last @ before the host
    text = re.sub(user, r"\1[REDACTED]@", redact(text))
    # scp-like remotes, user@host:path: a user part but `git` is a credential too
    return re.sub(r"(?<![\w.@/-])(?!git@)(?!\[REDACTED\]@)[^\s@/:]+@([\w.-]+:)", r"[REDACTED]@\1", text)


def redact_prefix(text: str, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters from the start of ``text`` redacted, and whether some were left out.

    The text is redacted before it is cut (SPEC §10), with ``MARGIN`` more than is shown, and
    ``CONTEXT_CHARS`` more when a key block opens in it: a key whose END line lies past the cut, or
    a JSON key file with its rows joined by ``\\n``, is recognised whole. The cost stays that of what
    is shown, however long the text. The last ``MARGIN`` characters redacted are never shown (half
    a token may sit there), and a cut never leaves half a ``[REDACTED]``.
    """
    near = text[: limit + MARGIN]
    reach = limit + (CONTEXT_CHARS if "-----BEGIN" in near or "private_key" in near.lower() else MARGIN)
    redacted = redact(text[:reach])
    if len(text) <= reach and len(redacted) <= limit:
        return redacted, False
    if len(text) > reach:
        redacted = redacted[: max(len(redacted) - MARGIN, 0)]
    shown = redacted[:limit]
    opened = shown.rfind("[", max(limit - len(REDACTED), 0))
    if opened >= 0 and redacted.startswith(REDACTED, opened):
        shown = shown[:opened]
    return shown, True


def _apply(patterns: list[tuple[str, str]], text: str) -> str:
    """``text`` with each pattern whose marker it holds applied in turn."""
    lowered = text.lower()
    for marker, pattern in patterns:
        if marker in lowered:
            text = re.sub(pattern, _keep_all_but_the_secret, text)
    return text


def _names_a_secret(line: str) -> bool:
    lowered = line.lower()
    return any(word in lowered for word in SECRET_WORDS)


def _keep_all_but_the_secret(match: re.Match[str]) -> str:
    """The match with its group ``s`` (or, for a token, all of it) replaced; a quoted value keeps its quotes.

    A group ``r`` is replaced only when it ``looks_random``, a group ``t`` (all the match) only when
    ``_is_random_token``: otherwise the match comes back as it was.
    """
    groups = match.re.groupindex
    if "t" in groups:
        return REDACTED if _is_random_token(match.group("t")) else match.group(0)
    secret = "s" if "s" in groups else "r" if "r" in groups else None
    if secret is None:
        return REDACTED
    if secret == "r" and not looks_random(match.group("r")):
        return match.group(0)
    start, end = match.span(secret)
    if end - start > 2 and _is_quoted(match.group(secret)):
        start, end = start + 1, end - 1
    return match.group(0)[: start - match.start()] + REDACTED + match.group(0)[end - match.start() :]


def _is_quoted(value: str) -> bool:
    return value[0] == value[-1] and value[0] in "\"'"


# What a run of random characters that is no secret starts with: a hash's name (npm's sha512-, go.sum's
# h1:), an SSH public key (AAAA), a certificate's or public key's DER in base64 (a SEQUENCE: MI…, MF…;
# a private key's has its own rule before), a bech32 address (age1…).
PUBLIC_RUN = r"(?i:sha(?:1|224|256|384|512)|md5|blake2[bs]?|h1)[_:-]|AAAA|M[C-I]|[a-z]{1,10}1[02-9ac-hj-np-z]{30}"


def looks_random(value: str, hex_counts: bool = True) -> bool:
    """Whether ``value``'s longest run of letters and digits was made by a generator, not typed.

    Sixteen characters at least, letters and digits, no character repeated much, and: digits in
    three places or more; or, in both cases, the kind of character changing often (a random
    base62 run changes at six in ten characters) with less than 40 % of it in words
    (``Base64EncoderVersion2`` is an identifier); or, in one case, changing at one in four with
    few vowels (random letters have one in five, words two in five). A run of hex digits counts only when
    ``hex_counts``: alone, one is a commit id or a checksum more often than a secret.
    """
    run = max(re.split(r"[^A-Za-z0-9+/]", value), key=len)
    if len(run) < 16 or not re.search(r"\d", run) or not re.search(r"[A-Za-z]", run):
        return False
    if not hex_counts and re.fullmatch(r"[0-9a-fA-F]+", run):
        return False
    if _entropy(run) < 3.0:
        return False
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" if c.islower() else "o" for c in run]
    changes = sum(a != b for a, b in zip(kinds, kinds[1:])) / len(run)
    digit_groups = len(re.findall(r"\d+", run))
    if re.search("[a-z]", run) and re.search("[A-Z]", run):
        words = sum(len(word) for word in re.findall(r"[A-Z]?[a-z]{3,}", run)) / len(run)
        return (changes >= 0.3 and words < 0.4) or digit_groups >= 3
    letters = re.sub("[^A-Za-z]", "", run)
    vowels = sum(c in "aeiouAEIOU" for c in letters) / len(letters)
    return digit_groups >= 3 or (changes >= 0.25 and vowels < 0.3)


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text).values()
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts)


def _is_random_token(run: str) -> bool:
    """A prefix and a separator then a random run of 20 or more (``acme_live_9fQ2…``, ``tok-v2-…``), or a
    random run of 32 or more alone; never a commit id, a checksum, a public key or an identifier.

    A run with a slash but no ``+`` or padding is a path: each part is judged on its own.
    """
    body = run.rstrip("=")
    if "/" in body and "+" not in body and body == run:
        return any(_is_random_token(part) for part in body.split("/") if len(part) >= 20)
    if re.match(PUBLIC_RUN, body):
        return False
    parts = re.split(r"[_.-]", body)
    if len(parts) > 1 and re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,15}", parts[0]):
        longest = max(parts, key=len)
        return len(longest) >= 20 and looks_random(longest, hex_counts=False)
    few_separators = len(parts) - 1 <= len(body) / 16
    joined = re.sub(r"[_.-]", "", body)
    return len(body) >= 32 and few_separators and looks_random(joined, hex_counts=False) and not _encoded_prose(run)


def _encoded_prose(run: str) -> bool:
    """Whether ``run`` is base64 of words (``aGVsbG8gd29ybGQ…``): printable text with spaces is no key."""
    try:
        decoded = binascii.a2b_base64(run + "=" * (-len(run) % 4)).decode("ascii")
    except ValueError:
        return False
    return " " in decoded and decoded.isprintable()
