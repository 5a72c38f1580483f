"""Secret redaction (ADR 16, ADR 23): real-looking token shapes go, ordinary text that resembles them stays.

The corpus of real config formats, command lines and headers is `test_redact_corpus.py` (ADR 23).
"""

import pytest

from blackboard.redact import REDACTED, redact, redact_prefix

# Shapes as the providers issue them (made-up values). Each must vanish whole.
SECRETS = [
    pytest.param("sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3, id="anthropic"),
    pytest.param("sk-ant-admin01-" + "Xy9_Kq2-Lm4" * 8 + "AA", id="anthropic-admin"),
    pytest.param("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2, id="openai-project"),
    pytest.param("sk-svcacct-" + "Ab3dEf6hIj9kLm2nOp5q" * 3 + "T3BlbkFJ" + "Zz1" * 10, id="openai-service-account"),
    pytest.param("sk-admin-" + "Qw3rTy6uIo9pAs2dFg5h" * 2, id="openai-admin"),
    pytest.param("sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2", id="openai-legacy"),
    pytest.param("sk-" + "0123456789abcdef" * 2, id="sk-hex-body"),
    pytest.param("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", id="github-classic"),
    pytest.param("gho_" + "16C7e42F292c6912E7710c838347Ae178B4a", id="github-oauth"),
    pytest.param("ghu_" + "16C7e42F292c6912E7710c838347Ae178B4a", id="github-user-to-server"),
    pytest.param("ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a", id="github-server-to-server"),
    pytest.param("ghr_" + "16C7e42F292c6912E7710c838347Ae178B4a", id="github-refresh"),
    pytest.param("github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 6, id="github-fine-grained"),
    pytest.param("glpat-" + "xYz12AbC34dEf56GhI78", id="gitlab"),
    pytest.param("npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", id="npm"),
    pytest.param("pypi-AgEIcHlwaS5vcmc" + "CJDk2ZjM0YjA4LTk1" * 4, id="pypi"),
    pytest.param("AKIAIOSFODNN7EXAMPLE", id="aws-access-key"),
    pytest.param("ASIAY34FZKBOKMUTVV7A", id="aws-temporary-key"),
    pytest.param("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", id="slack-bot"),
    pytest.param("xoxp-1234567890-1234567890123-1234567890123-" + "a1b2c3d4" * 4, id="slack-user"),
    pytest.param("xapp-1-A0123456789-1234567890123-" + "0123456789abcdef" * 4, id="slack-app"),
    pytest.param("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", id="slack-webhook"),
    pytest.param(
        "https://hooks.slack.com/workflows/T01ABCDEF/A02ABCDEF/123456789012345678/AbCdEfGhIjKlMnOp",
        id="slack-workflow-webhook",
    ),
    pytest.param("sk_live_" + "51HqLyjWDarjtT1zdp7dc", id="stripe-live"),
    pytest.param("rk_live_" + "51HqLyjWDarjtT1zdp7dcXYZ", id="stripe-restricted"),
    pytest.param("whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", id="stripe-webhook-secret"),
    pytest.param("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", id="google-api-key"),
    pytest.param("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBW-", id="google-api-key-ending-in-dash"),
    pytest.param(
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        id="bare-jwt",
    ),
    pytest.param("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123", id="bearer"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----", id="rsa-private-key"),
    pytest.param("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----", id="ec-private-key"),
    pytest.param(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        id="openssh-private-key",
    ),
    pytest.param(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", id="pgp-private-key"
    ),
    pytest.param("glrt-" + "t1_a1B2c3D4e5F6g7H8i9J0k", id="gitlab-runner"),
    pytest.param("GR1348941" + "a1B2c3D4e5F6g7H8i9J0", id="gitlab-runner-registration"),
    pytest.param("hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567", id="hugging-face"),
    pytest.param("SG." + "a1B2c3D4e5F6g7H8i9J0kL" + "." + "m3N4o5P6q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H", id="sendgrid"),
    pytest.param("dop_v1_" + "0123456789abcdef" * 4, id="digitalocean-pat"),
    pytest.param("doo_v1_" + "fedcba9876543210" * 4, id="digitalocean-oauth"),
    pytest.param("sk-" + "abcdefghijklmnopqrstuvwxyzabcdefghijklmnop", id="openai-lowercase"),
]


@pytest.mark.parametrize("secret", SECRETS)
def test_secrets_are_redacted(secret: str) -> None:
    assert redact(f"before {secret} after") == f"before {REDACTED} after"


JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJhdXRoIiwiZXhwIjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJlLWJ5dGVz"


IN_CONTEXT = [
    pytest.param("curl -H 'Authorization: {}' https://api", f"Bearer {JWT}", id="jwt-after-authorization-bearer"),
    pytest.param(
        "GET https://api.example.com/v1/x?api_key={}&format=json", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", id="url-query"
    ),
    pytest.param(
        "https://maps.googleapis.com/maps?key={}&q=x", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", id="url-query-google"
    ),
    pytest.param("OPENAI_API_KEY={}", "sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w", id="after-equals"),
    pytest.param("token:{}", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", id="after-colon"),
    pytest.param('key = "{}"', "AKIAIOSFODNN7EXAMPLE", id="double-quotes"),
    pytest.param("SLACK='{}'", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", id="single-quotes"),
    pytest.param('{{"stripe": "{}"}}', "sk_live_51HqLyjWDarjtT1zdp7dc", id="json-value"),
    pytest.param("`{}`", "github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 6, id="backticks"),
    pytest.param("keys:\n{}\nend", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----", id="multiline-key"),
    pytest.param("x={},y={}", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", id="twice"),
]

# Values whose surroundings stay: (text, what it must become).
VALUES = [
    pytest.param(
        "git clone https://alice:s3cretPassw0rd@git.example.com/acme/widget.git",
        "git clone https://alice:[REDACTED]@git.example.com/acme/widget.git",
        id="url-credentials",
    ),
    pytest.param(
        "DATABASE_URL=postgres://app:hunter2hunter2@db.internal:5432/app",
        "DATABASE_URL=postgres://app:[REDACTED]@db.internal:5432/app",
        id="postgres-url",
    ),
    pytest.param("PASSWORD=correct-horse-battery", "PASSWORD=[REDACTED]", id="env-password"),
    pytest.param(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED]",
        id="aws-secret-key",
    ),
    pytest.param(
        '"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        '"aws_secret_access_key = [REDACTED]"',
        id="aws-secret-in-quotes",
    ),
    pytest.param("password: hunter2hunter2", "password: [REDACTED]", id="yaml-password"),
    pytest.param(
        "origin https://abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop@dev.azure.com/acme/_git/widget",
        "origin https://[REDACTED]@dev.azure.com/acme/_git/widget",
        id="token-as-url-user",
    ),
    pytest.param(
        "https://bucket.s3.amazonaws.com/f?X-Amz-Credential=AKIAXX%2F20261125&X-Amz-Signature=4f3c2b1a0e9d8c7b&x=1",
        "https://bucket.s3.amazonaws.com/f?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]&x=1",
        id="presigned-url",
    ),
    pytest.param(
        "wss://api.example.com/stream?access_token=q1w2e3r4t5y6u7i8",
        "wss://api.example.com/stream?access_token=[REDACTED]",
        id="access-token-in-query",
    ),
    pytest.param("export API_KEY='abc123def456ghi'", "export API_KEY='[REDACTED]'", id="env-api-key"),
    pytest.param("SECRET_KEY=django-insecure-9x8y7z", "SECRET_KEY=[REDACTED]", id="env-secret-key"),
    pytest.param("SENTRY_AUTH_TOKEN=abcd1234efgh5678", "SENTRY_AUTH_TOKEN=[REDACTED]", id="env-token"),
    pytest.param("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]", id="basic-auth"),
    pytest.param(
        "//registry.npmjs.org/:_authToken=a1b2c3d4-e5f6-7890-abcd-ef1234567890",
        "//registry.npmjs.org/:_authToken=[REDACTED]",
        id="npmrc",
    ),
    pytest.param(
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + "A1b2C3d4E5f6G7h8I9j0" * 4 + "==;",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED];",
        id="azure-account-key",
    ),
    pytest.param(
        "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=AbCdEf123%2BGhIjKl%3D&se=2026",
        "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=[REDACTED]&se=2026",
        id="azure-sas",
    ),
    pytest.param("db.internal:5432:app:app_user:Sup3rS3cret!", "db.internal:5432:app:app_user:[REDACTED]", id="pgpass"),
    pytest.param(
        "mysql -u root -pS3cretPass app < dump.sql", "mysql -u root -p[REDACTED] app < dump.sql", id="mysql-p"
    ),
]


@pytest.mark.parametrize(("text", "expected"), VALUES)
def test_a_secret_value_goes_and_its_name_stays(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(("template", "secret"), IN_CONTEXT)
def test_a_secret_goes_and_what_surrounds_it_stays(template: str, secret: str) -> None:
    assert redact(template.format(*[secret] * template.count("{}"))) == template.format(
        *[REDACTED] * template.count("{}")
    )


def test_a_private_key_without_its_end_line_is_redacted_to_the_end() -> None:
    assert redact("see\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\nbnNz") == f"see\n{REDACTED}"


# Ordinary text that contains a marker or looks like a token; each must come back unchanged.
NEAR_MISSES = [
    pytest.param("ask-me anything, task-runner, desk-lamp, risk-averse, whisk-together", id="words-with-sk"),
    pytest.param("task-runner-configuration-for-the-nightly-build", id="long-word-with-sk"),
    pytest.param("commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it", id="commit-hash"),
    pytest.param("(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)", id="cherry-pick-line"),
    pytest.param("Merge pull request #42 from acme/sk-widget-refactor-cleanup-branch", id="branch-with-sk"),
    pytest.param("session 123e4567-e89b-12d3-a456-426614174000 ended", id="uuid"),
    pytest.param("aGVsbG8gd29ybGQgdGhpcyBpcyBmaW5l", id="base64-of-text"),
    pytest.param("eyJ is what base64 of '{\"' starts with; eyJhbGciOiJIUzI1NiJ9 alone is a header", id="jwt-header"),
    pytest.param("sk-short and sk-12345", id="short-sk"),
    pytest.param("the bearer of bad news", id="bearer-word"),
    pytest.param("Bearer of bad news", id="bearer-capitalised"),
    pytest.param("AKIA is a prefix, and so is ASIA", id="aws-prefix-words"),
    pytest.param("xoxo, the team", id="xoxo"),
    pytest.param("AIza marks Google keys", id="aiza-word"),
    pytest.param("ghp_ is the prefix of a GitHub token", id="github-prefix-word"),
    pytest.param("npm_config_cache and npm_lifecycle_event", id="npm-variables"),
    pytest.param("/srv/data/sk-experiments-ablation-runs/results.csv", id="path-with-sk-directory"),
    pytest.param("~/src/sk-learn-tutorial-notebooks/README.md", id="home-path-with-sk"),
    pytest.param("lib/my_test_helpers/some_test_case.py", id="path-with-test"),
    pytest.param("we rotate the private key every -----BEGIN-less month", id="begin-without-key"),
    pytest.param("https://hooks.slack.com/ is where webhooks live", id="slack-host-alone"),
    pytest.param("set aws_secret_access_key in ~/.aws/credentials", id="aws-variable-named"),
    pytest.param("/home/me/src/xoxb-slack-notifier-service/app.py", id="folder-named-like-slack"),
    pytest.param("git checkout sk-learn-upgrade", id="branch-named-sk"),
    pytest.param("PASSWORD_MIN_LENGTH=12 and TOKEN_TTL=3600", id="numeric-settings"),
    pytest.param("the secret: keep tests small", id="secret-in-prose"),
    pytest.param("mysql -u root -p app", id="mysql-prompting-for-the-password"),
    pytest.param("at 10:30:45 and 11:15:00", id="times"),
    pytest.param("https://github.com/acme/widget.git", id="url-without-credentials"),
    pytest.param("ssh://git@github.com:22/acme/widget", id="ssh-user-without-password"),
    pytest.param("https://john.doe@gitlab.example.com/acme/widget.git", id="url-with-a-user-name"),
    pytest.param("https://example.com/search?key=abc&sort=asc", id="short-query-values"),
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_survive(text: str) -> None:
    assert redact(text) == text


def test_a_boards_own_note_lines_are_not_pgpass_lines() -> None:
    """Four colons (a time, an author, the note), but blanks between them."""
    line = "- 2026-11-24T01:07:45Z (main): turn 3: found it"
    assert redact(line) == line


@pytest.mark.parametrize("limit", [200, 1200, 2000])
@pytest.mark.parametrize("inside", [1, 8, 20, 39, 40 - 512, 10 - 4096])
def test_a_cut_never_leaves_part_of_a_token_showing(limit: int, inside: int) -> None:
    """A token crossing where the text is cut, after a key block that redaction shortens, is never half shown."""
    key_block = "-----BEGIN RSA PRIVATE KEY-----\n" + "M" * 1500 + "\n-----END RSA PRIVATE KEY-----\n"
    token = "ghp_" + "A1b2C3d4E5" * 4
    before = limit - inside  # the token starts `inside` characters before the cut (or after it)
    text = key_block + "x" * max(before - len(key_block) - 1, 0) + " " + token + " tail" * 400
    shown, cut = redact_prefix(text, limit)
    assert cut and len(shown) <= limit
    assert not any(token[:n] in shown for n in range(6, len(token) + 1))


KEY_ROWS = "\n".join(["MIIEowIBAAKCAQEAxAbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/abcdefgh"] * 6) + "\nAbc="
ROW = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q9Zx"  # one row of a key body, 55 characters
KEY_BODY = [ROW[i:] + ROW[:i] for i in range(40)]  # 40 rows, each its own
YAML_KEY = (
    "tls:\n  key: |\n    -----BEGIN PRIVATE KEY-----\n"
    + "".join(f"    {r}\n" for r in KEY_BODY)
    + ("    -----END PRIVATE KEY-----\n")
)
JSON_KEY = (
    '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
    + "\\n".join(KEY_BODY)
    + '\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@acme.iam.gserviceaccount.com"}'
)


@pytest.mark.parametrize("limit", [200, 1199, 1999, 3999])
@pytest.mark.parametrize("key", [YAML_KEY, JSON_KEY], ids=["yaml-indented", "json-escaped"])
def test_a_long_paste_is_redacted_to_its_end_before_it_is_cut(limit: int, key: str) -> None:
    """Issue 39, point 5: a key that starts before the cut and ends far beyond it shows no row."""
    text = "please deploy this:\n" + "x" * (limit // 2) + "\n" + key + "\nthanks " + "y" * limit
    shown, cut = redact_prefix(text, limit)
    assert cut and len(shown) <= limit
    assert not any(row[:20] in shown for row in KEY_BODY)


@pytest.mark.parametrize("before", range(len(REDACTED) + 2))
def test_a_cut_never_leaves_half_a_redaction_mark(before: int) -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    shown, cut = redact_prefix("x" * (100 - before) + token + " and more text after it", 100)
    assert cut and len(shown) <= 100
    assert "[" not in shown.replace(REDACTED, "")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("-----BEGIN RSA PRIVATE KEY-----\n" + KEY_ROWS, id="a-key-with-no-end"),
        pytest.param("see -----BEGIN OPENSSH PRIVATE KEY----- for the format", id="a-note-naming-the-header"),
        pytest.param(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\n" + KEY_ROWS,
            id="an-encrypted-key-with-no-end",
        ),
    ],
)
def test_a_broken_key_block_costs_only_itself(text: str) -> None:
    later = "\n".join(f"- 2026-11-24T10:0{i}:00Z · main: later note {i} about the parser" for i in range(5))
    redacted = redact(text + "\n\n" + later)
    assert all(f"later note {i} about the parser" in redacted for i in range(5))
    assert "MIIEowIBAAKCAQEA" not in redacted and "Abc=" not in redacted.replace("Abcd", "")


@pytest.mark.parametrize(
    ("remote", "shown"),
    [
        ("https://bob@T0KEN:x@host/a.git", "https://[REDACTED]@host/a.git"),
        ("T0KEN123@github.com:acme/w.git", "[REDACTED]@github.com:acme/w.git"),
        ("git@github.com:acme/w.git", "git@github.com:acme/w.git"),
        ("ssh://git@host:22/acme/w.git", "ssh://git@host:22/acme/w.git"),
        ("https://s3cr3t@dev.azure.com/o/p/_git/w", "https://[REDACTED]@dev.azure.com/o/p/_git/w"),
    ],
)
def test_a_remote_is_shown_without_its_user_part(remote: str, shown: str) -> None:
    from blackboard.redact import redact_remote

    assert redact_remote(f"from origin {remote}") == f"from origin {shown}"
