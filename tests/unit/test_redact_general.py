"""Issue 39, point 1: what a secret looks like, whoever issued it.

The shapes and near misses are in the corpus (test_redact_corpus.py, ``ISSUE_39_FAMILIES``); these
tests hold the judgement of a random run and its cost.
"""

import string
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackboard.redact import REDACTED, looks_random, redact

ALNUM = string.ascii_letters + string.digits


@pytest.mark.parametrize(
    "value",
    [
        "9fQ2xK7pLm3Zt8Wq1Rv4",
        "kToVsLwoOFvEQW5QGrVmCTcF0NHJZTOg",
        "a81b3c7d9e0f1a2b3c4d5e6f7a8b9c0d",  # hex counts under a name
        "s%3A6EjjliKy0T7Ey0NVky0Rby2fWG04Fa2l.oGY5",
    ],
)
def test_a_generated_value_looks_random(value: str) -> None:
    assert looks_random(value)


@pytest.mark.parametrize(
    "value",
    [
        "MyApplicationServiceImpl",  # letters only
        "Base64EncoderVersion2",  # an identifier: the kind of character seldom changes
        "test_every_pattern_2024",  # short parts
        "1234567890123456789",  # digits only
        "aaaa1111aaaa1111aaaa",  # repeated
        "123e4567-e89b-12d3-a456-426614174000",  # a UUID's parts are short
    ],
)
def test_a_typed_value_does_not_look_random(value: str) -> None:
    assert not looks_random(value)


def test_a_commit_id_or_checksum_alone_is_no_token() -> None:
    assert not looks_random("3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", hex_counts=False)
    text = "fixed in 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, sum 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd"
    assert redact(text) == text


@settings(max_examples=50)
@given(
    prefix=st.from_regex(r"[a-z]{2,6}(_(live|test|prod|pat))?", fullmatch=True),
    separator=st.sampled_from("_-"),
    run=st.text(ALNUM, min_size=24, max_size=64).filter(lambda r: looks_random(r, hex_counts=False)),
)
def test_any_prefix_and_separator_before_a_random_run_is_a_token(prefix: str, separator: str, run: str) -> None:
    assert redact(f"use {prefix}{separator}{run} now") == f"use {REDACTED} now"


RUN_MIB = ("Ab1" * 400_000)[: 1 << 20]  # one run of a mebibyte, judged once
RUNS_MIB = ("kToVsLwoOFvEQW5QGrVmCTcF0NHJZTOg " * 33_000)[: 1 << 20]  # 32 000 random runs
IDENTIFIERS_MIB = ("test_every_pattern_takes_time_linear_in_its_input_v2 " * 20_000)[: 1 << 20]


@pytest.mark.timing
@pytest.mark.parametrize("text", [RUN_MIB, RUNS_MIB, IDENTIFIERS_MIB], ids=["one-run", "many-runs", "identifiers"])
def test_judging_random_runs_is_linear(text: str) -> None:
    """Each run is judged once, in time linear in its length: a mebibyte of them in well under seconds."""
    small = text[: 32 << 10]
    started = time.process_time()
    redact(small)
    small_took = time.process_time() - started
    started = time.process_time()
    redact(text)
    took = time.process_time() - started
    assert took < 32 * 4 * max(small_took, 0.002) + 0.5, (small_took, took)
