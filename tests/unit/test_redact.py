import pytest

from blackboard.redact import REDACTED, redact

SECRETS = [
    pytest.param("sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3, id="anthropic"),
    pytest.param("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2, id="openai-project"),
    pytest.param("sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2", id="openai-legacy"),
    pytest.param("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", id="github-classic"),
    pytest.param("github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 6, id="github-fine-grained"),
    pytest.param("AKIAIOSFODNN7EXAMPLE", id="aws-access-key"),
    pytest.param("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", id="slack-bot"),
    pytest.param("sk_live_" + "51HqLyjWDarjtT1zdp7dc", id="stripe-live"),
    pytest.param("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123", id="bearer"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----", id="private-key"),
]


@pytest.mark.parametrize("secret", SECRETS)
def test_secrets_are_redacted(secret: str) -> None:
    out = redact(f"before {secret} after")
    assert secret not in out and REDACTED in out and out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("ask-me anything, task-runner, desk-lamp", id="words-with-sk"),
        pytest.param("commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it", id="commit-hash"),
        pytest.param("sk-short", id="short-sk"),
        pytest.param("the bearer of bad news", id="bearer-word"),
        pytest.param("AKIA is a prefix", id="akia-word"),
    ],
)
def test_near_misses_survive(text: str) -> None:
    assert redact(text) == text
