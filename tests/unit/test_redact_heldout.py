"""Redaction generalises (SPEC §10, issue 39): the held-out corpus, written without reading the redaction code.

Every record of tests/fixtures/redaction-heldout goes through the public ``redact(text)``. Overall,
at most 5 % of the secrets may leak (the secret, or 8 of its characters in a row, still in the
output) and at most 3 % of the near misses may change at all: the goal of record (SPEC §10). No
family may fall back past ``FAMILY_CEILING``; where a family is still over 5 % (docs/adr/0023) is
printed by ``bench/redaction_corpus.py``.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from blackboard.redact import redact
from heldout_corpus import (
    ALL_SECRETS,
    CORPUS,
    LEAK_RUN,
    NEAR_MISS,
    Score,
    failures_listed,
    leaks,
    load,
    score,
    table,
)

RECORDS = load()
SECRET_FAMILIES = sorted({r.family for r in RECORDS if r.secret is not None})


@pytest.fixture(scope="module")
def scores() -> dict[str, Score]:
    return score(redact, RECORDS)


def verdict(scores: dict[str, Score], group: str) -> str:
    figures = table(scores, "held-out corpus, blackboard.redact:")
    return f"\n{figures}\n\n{group} got wrong:\n{failures_listed(scores[group])}"


FAMILY_CEILING = 0.2  # a family past this has lost most of what the general rules gave it


@pytest.mark.parametrize("family", SECRET_FAMILIES)
def test_no_family_falls_back(scores: dict[str, Score], family: str) -> None:
    assert scores[family].rate <= FAMILY_CEILING, verdict(scores, family)


def test_secrets_overall_do_not_leak(scores: dict[str, Score]) -> None:
    assert scores[ALL_SECRETS].ok, verdict(scores, ALL_SECRETS)


def test_near_misses_come_back_unchanged(scores: dict[str, Score]) -> None:
    assert scores[NEAR_MISS].ok, verdict(scores, NEAR_MISS)


def test_the_corpus_has_the_size_the_issue_asks_for() -> None:
    secrets = [r for r in RECORDS if r.secret is not None]
    per_family = {f: sum(r.family == f for r in secrets) for f in SECRET_FAMILIES}
    assert len(SECRET_FAMILIES) == 9, per_family
    assert min(per_family.values()) >= 25, per_family
    assert len(secrets) >= 300
    assert sum(r.family == NEAR_MISS for r in RECORDS) >= 120


def test_each_secret_is_in_its_text_and_nowhere_else() -> None:
    """Otherwise a redactor could be blamed for a run of the secret that the text holds elsewhere."""
    misplaced = [
        r.shape
        for r in RECORDS
        if r.secret is not None and (r.secret not in r.text or leaks(r.secret, r.text.replace(r.secret, "\0")))
    ]
    assert misplaced == []


def test_the_corpus_is_what_its_generator_writes(tmp_path: Path) -> None:
    """The records are edited through generate.py only, so every value stays drawn from its seed."""
    subprocess.run([sys.executable, str(CORPUS / "generate.py"), str(tmp_path)], check=True, capture_output=True)
    written = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert written == sorted(p.name for p in CORPUS.glob("*.jsonl"))
    assert all((tmp_path / name).read_bytes() == (CORPUS / name).read_bytes() for name in written)


def test_a_secret_leaks_while_any_run_of_8_of_its_characters_is_left() -> None:
    secret = "Kestrel!Dune2291"
    assert leaks(secret, f"pw: {secret}")
    assert leaks(secret, "pw: Kestrel!D[REDACTED]")
    assert not leaks(secret, "pw: Kestrel[REDACTED]")
    assert not leaks(secret, "pw: [REDACTED]")
    assert LEAK_RUN == 8


def test_the_score_tells_a_redactor_that_does_nothing_from_one_that_removes_each_secret() -> None:
    """The measure can fail and can pass: it is not tuned to the redactor under test."""
    untouched = score(lambda text: text, RECORDS)
    assert all(untouched[f].rate == 1.0 for f in [*SECRET_FAMILIES, ALL_SECRETS])
    assert untouched[NEAR_MISS].rate == 0.0
    secret_of = {r.text: r.secret for r in RECORDS}

    def oracle(text: str) -> str:
        secret = secret_of[text]
        return text.replace(secret, "[REDACTED]") if secret else text

    assert all(s.rate == 0.0 for s in score(oracle, RECORDS).values())
    assert score(lambda text: text + " ", RECORDS)[NEAR_MISS].rate == 1.0
