"""The held-out redaction corpus (issue 39): its records, and how a redactor scores on them.

Shared by ``tests/unit/test_redact_heldout.py`` and ``bench/redaction_heldout.py``. A secret leaks
when its text, or any run of 8 of its characters, is still in the redactor's output; a near miss
fails when the output differs from it in any way.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

CORPUS = Path(__file__).resolve().parent / "fixtures" / "redaction-heldout"
NEAR_MISS = "near-miss"
ALL_SECRETS = "all secrets"
MAX_LEAK_RATE = 0.05  # SPEC §10: at most 5 % of the secrets of a corpus the project has never seen leak
MAX_CHANGE_RATE = 0.03  # ... and at most 3 % of its near misses change
LEAK_RUN = 8


@dataclass(frozen=True)
class Record:
    family: str
    shape: str
    text: str
    secret: Optional[str]
    source: str


@dataclass(frozen=True)
class Score:
    """How one family fared: its records and those the redactor got wrong."""

    family: str
    total: int
    failures: tuple[Record, ...]

    @property
    def rate(self) -> float:
        return len(self.failures) / self.total if self.total else 0.0

    @property
    def limit(self) -> float:
        return MAX_CHANGE_RATE if self.family == NEAR_MISS else MAX_LEAK_RATE

    @property
    def ok(self) -> bool:
        return self.rate <= self.limit


def load() -> list[Record]:
    """Every record of every ``*.jsonl`` file of the corpus, in file order."""
    records = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            records.append(Record(raw["family"], raw["shape"], raw["text"], raw.get("secret"), raw["source"]))
    return records


def leaks(secret: str, output: str) -> bool:
    """True if ``output`` still holds ``secret`` or any run of 8 of its characters."""
    if secret in output:
        return True
    return any(secret[i : i + LEAK_RUN] in output for i in range(len(secret) - LEAK_RUN + 1))


def failed(record: Record, output: str) -> bool:
    if record.secret is None:
        return output != record.text
    return leaks(record.secret, output)


def score(redactor: Callable[[str], str], records: list[Record]) -> dict[str, Score]:
    """Per family (and for all secrets together), how many records ``redactor`` got wrong."""
    totals: dict[str, int] = {}
    failures: dict[str, list[Record]] = {}
    for record in records:
        groups = [record.family] if record.secret is None else [record.family, ALL_SECRETS]
        wrong = failed(record, redactor(record.text))
        for group in groups:
            totals[group] = totals.get(group, 0) + 1
            failures.setdefault(group, [])
            if wrong:
                failures[group].append(record)
    return {group: Score(group, totals[group], tuple(failures[group])) for group in totals}


def table(scores: dict[str, Score], title: str = "") -> str:
    """The per-family figures, one line each, e.g. ``cookie  27  12 leaked  44.4 %  (limit 5 %)  FAIL``."""
    lines = [title] if title else []
    order = sorted(scores, key=lambda g: (g in (ALL_SECRETS, NEAR_MISS), g == NEAR_MISS, g))
    for group in order:
        s = scores[group]
        verb = "changed" if group == NEAR_MISS else "leaked"
        lines.append(
            f"  {group:<17} {s.total:>4} {len(s.failures):>4} {verb:<7} {s.rate:>6.1%}"
            f"  (limit {s.limit:.0%})  {'ok' if s.ok else 'FAIL'}"
        )
    return "\n".join(lines)


def failures_listed(score_: Score, limit: int = 40) -> str:
    """The shapes a family got wrong, to read in a failing test's message."""
    shown = [f"    - {r.shape}: {r.text[:100]!r}" for r in score_.failures[:limit]]
    more = len(score_.failures) - limit
    return "\n".join(shown + ([f"    ... and {more} more"] if more > 0 else []))
