"""The approval rule of the PreToolUse hook: plain board commands run unasked; nothing else is decided."""

import subprocess
from pathlib import Path

import pytest

from blackboard.approve import decision
from helpers import REPO

PLUGIN = str(REPO)
OUR_PATH = f"{PLUGIN}/bin/blackboard"

APPROVED = [
    pytest.param("blackboard note 'decided: the parser is a state machine'", id="note-single-quoted"),
    pytest.param('blackboard note "found it: the cache is never invalidated"', id="note-double-quoted"),
    pytest.param("blackboard note plain words", id="note-plain-words"),
    pytest.param("blackboard task add 'write the lexer'", id="task-add"),
    pytest.param("blackboard task claim t1", id="task-claim"),
    pytest.param("blackboard task done t1", id="task-done"),
    pytest.param("blackboard task list --all --json", id="task-list"),
    pytest.param("blackboard --author explorer post grammar 'expr := term (+ term)*'", id="post-author-first"),
    pytest.param("blackboard post grammar 'expr' --author explorer --replace", id="post-author-after"),
    pytest.param("blackboard read grammar", id="read"),
    pytest.param("blackboard claim grammar", id="claim-key"),
    pytest.param("blackboard list --json", id="list"),
    pytest.param("blackboard show", id="show"),
    pytest.param("blackboard sessions --status ended", id="sessions"),
    pytest.param("blackboard show s1", id="show-a-session-of-this-project"),
    pytest.param("blackboard handoff s1", id="handoff-of-this-project"),
    pytest.param("blackboard handoff", id="handoff"),
    pytest.param("blackboard where", id="where"),
    pytest.param("blackboard doctor", id="doctor"),
    pytest.param("blackboard cleanup --dry-run --older-than 7d", id="cleanup-dry-run"),
    pytest.param("blackboard sync status", id="sync-status"),
    pytest.param(f"{OUR_PATH} note 'by path'", id="the-plugins-own-path"),
    pytest.param("blackboard note '$HOME and `date` stay literal in single quotes'", id="dollar-in-single-quotes"),
    pytest.param('blackboard note "# heading? yes! *bold* [link]"', id="markdown-in-double-quotes"),
    pytest.param("blackboard note -- '--fix is only text here'", id="double-dash-text"),
    pytest.param("blackboard task add -- '--fix is a task'", id="double-dash-after-task-add"),
    pytest.param("blackboard cleanup --keep 3 --dry-run", id="cleanup-keep-dry-run"),
    pytest.param("blackboard note '- fixed the flaky test'", id="dash-text"),
    pytest.param("blackboard post schema --file notes/schema.md", id="file-inside-the-project"),
    pytest.param("blackboard note --file -", id="file-stdin"),
    pytest.param("blackboard --session s1 note 'its own session'", id="own-session"),
    pytest.param("  blackboard   note   spaced  ", id="extra-spaces"),
]

REFUSED = [
    pytest.param("blackboard note a; touch /tmp/pwned", id="semicolon"),
    pytest.param("blackboard note a && touch /tmp/pwned", id="and-list"),
    pytest.param("blackboard note a || touch /tmp/pwned", id="or-list"),
    pytest.param("blackboard note a | sh", id="pipe"),
    pytest.param("blackboard note a & touch /tmp/pwned", id="background"),
    pytest.param("blackboard note a\ntouch /tmp/pwned", id="newline"),
    pytest.param("blackboard note 'a\ntouch /tmp/pwned'", id="newline-in-quotes"),
    pytest.param("blackboard note a > /tmp/pwned", id="redirect-out"),
    pytest.param("blackboard note < /etc/passwd", id="redirect-in"),
    pytest.param("blackboard note $(touch /tmp/pwned)", id="command-substitution"),
    pytest.param('blackboard note "$(touch /tmp/pwned)"', id="substitution-in-double-quotes"),
    pytest.param("blackboard note `touch /tmp/pwned`", id="backticks"),
    pytest.param('blackboard note "`touch /tmp/pwned`"', id="backticks-in-double-quotes"),
    pytest.param("blackboard note $HOME", id="variable"),
    pytest.param("blackboard note ${HOME}", id="braced-variable"),
    pytest.param("blackboard note <(touch /tmp/pwned)", id="process-substitution"),
    pytest.param("{ blackboard note a; touch /tmp/pwned; }", id="group"),
    pytest.param("(blackboard note a)", id="subshell"),
    pytest.param("blackboard note *", id="glob-star"),
    pytest.param("blackboard note ?", id="glob-question"),
    pytest.param("blackboard note [a]", id="glob-bracket"),
    pytest.param("blackboard note ~/secrets", id="tilde"),
    pytest.param("FOO=1 blackboard note a", id="env-assignment"),
    pytest.param("PATH=/tmp/evil:$PATH blackboard note a", id="path-assignment"),
    pytest.param("eval blackboard note a", id="eval"),
    pytest.param("bash -c 'blackboard note a'", id="bash-c"),
    pytest.param("sh -c 'blackboard note a; touch /tmp/pwned'", id="sh-c"),
    pytest.param("env blackboard note a", id="env-wrapper"),
    pytest.param("command blackboard note a", id="command-wrapper"),
    pytest.param("/tmp/evil/blackboard note a", id="another-blackboard"),
    pytest.param("./blackboard note a", id="relative-blackboard"),
    pytest.param(f"{PLUGIN}/bin/../bin/blackboard-evil note a", id="lookalike-path"),
    pytest.param("blackboard note a \\; touch x", id="backslash"),
    pytest.param("blackboard note 'unterminated", id="unterminated-quote"),
    pytest.param("blackboard note a # comment", id="comment"),
    pytest.param("blackboard cleanup --yes", id="cleanup"),
    pytest.param("blackboard cleanup --older-than 0 --keep 0 --yes", id="cleanup-everything"),
    pytest.param("blackboard doctor --fix", id="doctor-fix"),
    pytest.param("blackboard task done 5f1c8a2e/t1 --force", id="task-done-over-a-live-claim"),
    pytest.param("blackboard task drop t1 --force --reason 'not needed'", id="task-drop-over-a-live-claim"),
    pytest.param("blackboard --json doctor --fix", id="doctor-fix-after-global"),
    pytest.param("blackboard migrate", id="migrate"),
    pytest.param("blackboard migrate --dry-run", id="migrate-dry-run"),
    pytest.param("blackboard sync", id="sync"),
    pytest.param("blackboard sync enable --remote https://example.invalid/x.git", id="sync-enable"),
    pytest.param("blackboard", id="no-subcommand"),
    pytest.param("blackboard --author", id="missing-option-value"),
    pytest.param("blackboard bogus", id="unknown-subcommand"),
    pytest.param("blackboard post k --file /etc/passwd", id="file-outside-the-project"),
    pytest.param("blackboard post k --file ../elsewhere/secret", id="file-above-the-project"),
    pytest.param("blackboard post k --file=/etc/passwd", id="file-equals-outside"),
    pytest.param("blackboard read k --file notes.md", id="file-on-a-reading-command"),
    pytest.param("blackboard note a\x00b", id="nul"),
    pytest.param("blackboard note \u2028hidden", id="line-separator"),
    pytest.param("", id="empty"),
    # A `--` before the command's name: click's group swallows it, and the command then reads
    # what follows as options (found in review).
    pytest.param("blackboard -- note --file /etc/passwd", id="double-dash-before-note-file"),
    pytest.param("blackboard task -- add --file /etc/passwd", id="double-dash-before-task-add"),
    pytest.param("blackboard -- note --session other injected", id="double-dash-before-session"),
    pytest.param("blackboard -- doctor --fix", id="double-dash-before-doctor-fix"),
    pytest.param("blackboard --json -- doctor --fix", id="double-dash-after-global-option"),
    pytest.param(f"{OUR_PATH} -- doctor --fix", id="double-dash-by-path"),
    pytest.param("blackboard note --keep --file /etc/passwd", id="another-commands-valued-option"),
    pytest.param("blackboard note 'a\x1bb'", id="escape-in-single-quotes"),
    pytest.param("blackboard --session other note 'forged'", id="another-session"),
    pytest.param("blackboard note x --session=other", id="another-session-equals"),
]


def _ours(session_id: str) -> bool:
    return session_id == "s1"


def _not_ignored(path: str) -> bool:
    return False


@pytest.mark.parametrize("command", APPROVED)
def test_plain_board_commands_are_approved(command: str, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "schema.md").write_text("schema")
    assert decision(command, str(tmp_path), PLUGIN, "s1", _ours, _not_ignored) is True


@pytest.mark.parametrize("command", REFUSED)
def test_anything_else_gets_no_decision(command: str, tmp_path: Path) -> None:
    assert decision(command, str(tmp_path), PLUGIN, "s1", _ours, _not_ignored) is False


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("blackboard show other-project-session", id="show-another-projects-session"),
        pytest.param("blackboard handoff other-project-session", id="handoff-of-another-project"),
        pytest.param("blackboard sessions --all-projects", id="sessions-of-every-project"),
        pytest.param("blackboard doctor --all-projects", id="doctor-of-every-project"),
        pytest.param("blackboard note --file .env", id="file-dot-env"),
        pytest.param("blackboard note --file .aws/credentials", id="file-in-a-dot-folder"),
        pytest.param("blackboard note --file notes/../.env", id="file-dot-env-by-a-detour"),
        pytest.param("blackboard note --file secrets-link", id="file-linked-to-a-dot-file"),
        pytest.param("blackboard note --file notes", id="file-a-folder"),
        pytest.param("blackboard note --file missing.md", id="file-missing"),
        pytest.param("blackboard note --file credentials.json", id="file-named-credentials"),
        pytest.param("blackboard note --file deploy/prod.pem", id="file-a-key"),
        pytest.param("blackboard post k --file config/id_ed25519", id="file-an-ssh-key"),
        pytest.param("blackboard note --file terraform.tfstate", id="file-terraform-state"),
    ],
)
def test_what_reaches_beyond_the_projects_own_board_gets_no_decision(command: str, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / ".env").write_text("API_KEY=x")
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("secret")
    (tmp_path / "secrets-link").symlink_to(tmp_path / ".env")
    for name in ("credentials.json", "deploy/prod.pem", "config/id_ed25519", "terraform.tfstate"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    assert decision(command, str(tmp_path), PLUGIN, "s1", _ours, _not_ignored) is False


def test_a_file_git_ignores_gets_no_decision(tmp_path: Path) -> None:
    (tmp_path / "build.log").write_text("log")
    assert decision("blackboard note --file build.log", str(tmp_path), PLUGIN, "s1", _ours, _not_ignored) is True
    assert decision("blackboard note --file build.log", str(tmp_path), PLUGIN, "s1", _ours, lambda p: True) is False
    assert decision("blackboard note --file build.log", str(tmp_path), PLUGIN, "s1") is False  # unasked: no


def test_a_file_linked_out_of_the_project_is_outside(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc/passwd")
    assert decision("blackboard post k --file link", str(tmp_path), PLUGIN) is False


@pytest.mark.parametrize("command", [None, 42, ["blackboard", "note"]])
def test_a_command_that_is_not_text_gets_no_decision(command: object, tmp_path: Path) -> None:
    assert decision(command, str(tmp_path), PLUGIN) is False


SECRET_FILES = [
    "terraform.tfstate.backup",
    "kubeconfig.yaml",
    "deploy/kube_config",
    "prod.env",
    "config/staging.env.local",
    "accessKeys.csv",
    "aws/access_key.txt",
    "hosts/krb5.keytab",
    "AuthKey_ABC123.p8",
    "backup.gpg",
    "vpn/office.ovpn",
    "env",
]


@pytest.mark.parametrize("name", SECRET_FILES)
def test_files_named_like_secrets_get_no_decision(name: str, tmp_path: Path) -> None:
    """Issue 32, point 5: these were approved when git did not ignore them."""
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("x")
    assert decision(f"blackboard note --file {name}", str(tmp_path), PLUGIN, "s1", _ours, _not_ignored) is False


@pytest.mark.parametrize("name", ["environment.md", "src/env.py", "docs/envelope.txt", "keys.md", "tokenizer_notes.md"])
def test_near_misses_of_secret_names_are_still_approved(name: str, tmp_path: Path) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("x")
    expected = "token" not in name  # a word naming secrets is refused wherever it stands: the person decides
    assert decision(f"blackboard note --file {name}", str(tmp_path), PLUGIN, "s1", _ours, _not_ignored) is expected


def test_a_file_reached_through_a_bind_mount_in_the_project_gets_no_decision(tmp_path: Path) -> None:
    """realpath sees no link in a bind mount: the folder is not the one its parent lists."""
    secret = tmp_path / "home-ssh"
    secret.mkdir()
    (secret / "notes.md").write_text("a private key's neighbour")
    project = tmp_path / "project"
    (project / "mounted").mkdir(parents=True)
    (project / "plain").mkdir()
    (project / "plain" / "notes.md").write_text("fine")
    mounted = subprocess.run(["mount", "--bind", str(secret), str(project / "mounted")], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"no bind mount here: {mounted.stderr.decode().strip()}")
    try:
        assert (project / "mounted" / "notes.md").exists()
        assert (
            decision("blackboard note --file mounted/notes.md", str(project), PLUGIN, "s1", _ours, _not_ignored)
            is False
        )
        assert (
            decision("blackboard note --file plain/notes.md", str(project), PLUGIN, "s1", _ours, _not_ignored) is True
        )
    finally:
        subprocess.run(["umount", str(project / "mounted")], check=True)
