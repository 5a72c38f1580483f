"""What a Bash command would do to the working tree, read from its text (docs/adr/0033-reading-shell-commands.md)."""

from __future__ import annotations

import shlex
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blackboard.shell import KINDS, Effect, effects, touches

CWD = "/repo"


def _seen(command: str, cwd: str = CWD) -> list[tuple]:
    """The effects as (kind, cwd, paths, whole): ``words`` is for people and checked apart."""
    return [(e.kind, e.cwd, e.paths, e.whole) for e in effects(command, cwd)]


def whole(kind: str, cwd: str = CWD) -> tuple:
    return (kind, cwd, (), True)


def paths(kind: str, *names: str, cwd: str = CWD) -> tuple:
    return (kind, cwd, names, False)


GIT = [
    pytest.param("git stash", [whole("stash")], id="stash"),
    pytest.param("git stash push", [whole("stash")], id="stash-push"),
    pytest.param("git stash -u -m wip", [whole("stash")], id="stash-options"),
    pytest.param("git stash save 'wip'", [whole("stash")], id="stash-save"),
    pytest.param("git stash push -- src/a.py", [paths("stash", "src/a.py")], id="stash-push-paths"),
    pytest.param("git stash pop", [whole("stash")], id="stash-pop"),
    pytest.param("git stash apply stash@{1}", [whole("stash")], id="stash-apply"),
    pytest.param("git stash drop", [whole("stash")], id="stash-drop"),
    pytest.param("git stash clear", [whole("stash")], id="stash-clear"),
    pytest.param("git stash branch fix", [whole("switch")], id="stash-branch"),
    pytest.param("git reset --hard", [whole("reset")], id="reset-hard"),
    pytest.param("git reset --hard HEAD~1", [whole("reset")], id="reset-hard-rev"),
    pytest.param("git reset --merge", [whole("reset")], id="reset-merge"),
    pytest.param("git reset --keep HEAD^", [whole("reset")], id="reset-keep"),
    pytest.param("git checkout main", [whole("switch")], id="checkout-branch"),
    pytest.param("git checkout -", [whole("switch")], id="checkout-previous"),
    pytest.param("git checkout -b feature/x", [whole("switch")], id="checkout-new-branch"),
    pytest.param("git checkout -B x origin/x", [whole("switch")], id="checkout-reset-branch"),
    pytest.param("git checkout --detach HEAD~2", [whole("switch")], id="checkout-detach"),
    pytest.param("git checkout main --", [whole("switch")], id="checkout-branch-dashdash"),
    pytest.param("git checkout -- src/a.py b.py", [paths("restore", "src/a.py", "b.py")], id="checkout-paths"),
    pytest.param("git checkout .", [paths("restore", ".")], id="checkout-dot"),
    # one operand may be a branch as well as a path (`release/v1.2`): a switch, the whole checkout at stake
    pytest.param("git checkout src/auth.py", [whole("switch")], id="checkout-one-path-or-branch"),
    pytest.param("git checkout release/v1.2", [whole("switch")], id="checkout-branch-with-a-dot"),
    pytest.param("git checkout -f release/v1.2", [whole("switch")], id="checkout-force"),
    pytest.param("git checkout ./src/auth.py", [paths("restore", "./src/auth.py")], id="checkout-one-path"),
    pytest.param("git checkout -- :/", [("restore", CWD, (":/",), True)], id="checkout-pathspec-top"),
    pytest.param("git commit -m mine", [paths("commit-staged")], id="plain-commit-takes-what-is-staged"),
    pytest.param("git commit --amend --no-edit", [paths("commit-staged")], id="amend-takes-what-is-staged"),
    pytest.param(
        "git restore ':(icase)SRC/AUTH.PY'", [("restore", CWD, (":(icase)SRC/AUTH.PY",), True)], id="restore-magic"
    ),
    pytest.param("git stash push -- ':!x'", [("stash", CWD, (":!x",), True)], id="stash-exclude-magic"),
    pytest.param("git checkout HEAD~1 -- f.py", [paths("restore", "f.py")], id="checkout-rev-paths"),
    pytest.param("git checkout main a.py", [paths("restore", "main", "a.py")], id="checkout-rev-path"),
    pytest.param("git checkout -p", [whole("restore")], id="checkout-patch"),
    pytest.param("git checkout -f", [whole("restore")], id="checkout-force"),
    pytest.param("git checkout --force main", [whole("switch")], id="checkout-force-branch"),
    pytest.param("git switch main", [whole("switch")], id="switch"),
    pytest.param("git switch -c new", [whole("switch")], id="switch-create"),
    pytest.param("git restore src/a.py", [paths("restore", "src/a.py")], id="restore"),
    pytest.param("git restore --source HEAD~1 a.py", [paths("restore", "a.py")], id="restore-source"),
    pytest.param("git restore -SW a.py", [paths("restore", "a.py")], id="restore-staged-and-worktree"),
    pytest.param("git restore .", [paths("restore", ".")], id="restore-dot"),
    pytest.param("git clean -fd", [paths("clean", ".")], id="clean"),
    pytest.param("git clean -fdx build", [paths("clean", "build")], id="clean-path"),
    pytest.param("git clean -f -e keep", [paths("clean", ".")], id="clean-exclude"),
    pytest.param("git pull", [whole("pull")], id="pull"),
    pytest.param("git pull --rebase origin main", [whole("pull")], id="pull-rebase"),
    pytest.param("git rebase main", [whole("rebase")], id="rebase"),
    pytest.param("git rebase --abort", [whole("rebase")], id="rebase-abort"),
    pytest.param("git merge feature", [whole("merge")], id="merge"),
    pytest.param("git cherry-pick abc123", [whole("cherry-pick")], id="cherry-pick"),
    pytest.param("git revert HEAD", [whole("revert")], id="revert"),
    pytest.param("git am < fix.mbox", [whole("am")], id="am"),
    pytest.param("git bisect start", [whole("switch")], id="bisect"),
    pytest.param("git apply fix.patch", [whole("rewrite")], id="apply"),
    pytest.param("git apply -p1 -R fix.patch", [whole("rewrite")], id="apply-reverse"),
    pytest.param("git add -A", [whole("sweep")], id="add-all-short"),
    pytest.param("git add --all", [whole("sweep")], id="add-all"),
    pytest.param("git add -u", [whole("sweep")], id="add-update"),
    pytest.param("git add :/", [whole("sweep")], id="add-top"),
    pytest.param("git add .", [paths("sweep", ".")], id="add-dot"),
    pytest.param("git add -A src", [paths("sweep", "src")], id="add-all-path"),
    pytest.param("git add src/a.py", [paths("sweep", "src/a.py")], id="add-path"),
    pytest.param("git commit -a -m 'x'", [whole("sweep")], id="commit-a"),
    pytest.param("git commit -am 'x'", [whole("sweep")], id="commit-am"),
    pytest.param("git commit --all --message x", [whole("sweep")], id="commit-all"),
    pytest.param("git commit -m 'fix: a' src/a.py", [paths("commit-paths", "src/a.py")], id="commit-paths"),
    pytest.param("git commit -m x -- a.py b.py", [paths("commit-paths", "a.py", "b.py")], id="commit-dashdash"),
    pytest.param("git commit -ma", [paths("commit-staged")], id="commit-message-a"),
    pytest.param("git rm src/a.py", [paths("remove", "src/a.py")], id="git-rm"),
    pytest.param("git mv a.py b.py", [paths("move", "a.py", "b.py")], id="git-mv"),
    pytest.param("git -C sub stash", [whole("stash", cwd="/repo/sub")], id="git-C"),
    pytest.param("git -C /other -C x reset --hard", [whole("reset", cwd="/other/x")], id="git-C-twice"),
    pytest.param("git --work-tree=../wt checkout .", [paths("restore", ".", cwd="/wt")], id="git-work-tree"),
    pytest.param("git --git-dir .git --work-tree wt stash", [whole("stash", cwd="/repo/wt")], id="git-dir-separate"),
    pytest.param("git -c core.hooksPath=/dev/null stash", [whole("stash")], id="git-c-option"),
    pytest.param("git --no-pager -P stash pop", [whole("stash")], id="git-flags"),
    pytest.param("/usr/bin/git stash", [whole("stash")], id="git-by-path"),
    pytest.param("git -c alias.wipe='reset --hard' wipe", [whole("reset")], id="git-alias-given"),
]

READS = [
    pytest.param("ls -la", id="ls"),
    pytest.param("pytest -q tests/", id="pytest"),
    pytest.param("git status", id="git-status"),
    pytest.param("git diff HEAD~1", id="git-diff"),
    pytest.param("git log --oneline -5", id="git-log"),
    pytest.param("git show HEAD:src/a.py", id="git-show"),
    pytest.param("git stash list", id="git-stash-list"),
    pytest.param("git stash show -p", id="git-stash-show"),
    pytest.param("git branch -a", id="git-branch"),
    pytest.param("git fetch origin", id="git-fetch"),
    pytest.param("git rev-parse HEAD", id="git-rev-parse"),
    pytest.param("git checkout", id="git-checkout-bare"),
    pytest.param("git reset", id="git-reset-mixed"),
    pytest.param("git reset --soft HEAD~1", id="git-reset-soft"),
    pytest.param("git reset -- a.py", id="git-reset-paths"),
    pytest.param("git restore --staged a.py", id="git-restore-staged"),
    pytest.param("git clean -n", id="git-clean-dry"),
    pytest.param("git clean -fdn", id="git-clean-dry-cluster"),
    pytest.param("git clean --dry-run -d", id="git-clean-dry-long"),
    pytest.param("git apply --check fix.patch", id="git-apply-check"),
    pytest.param("git apply --stat fix.patch", id="git-apply-stat"),
    pytest.param("git add --dry-run .", id="git-add-dry"),
    pytest.param("git rm --cached a.py", id="git-rm-cached"),
    pytest.param("git st", id="git-unknown-alias"),
    pytest.param("cat src/a.py", id="cat"),
    pytest.param("grep -rn 'rm -rf' src", id="grep"),
    pytest.param("sed -n '1,20p' a.py", id="sed-n"),
    pytest.param("sed 's/a/b/' a.py", id="sed-stdout"),
    pytest.param("perl -ne 'print' a.py", id="perl-no-i"),
    pytest.param("echo git stash", id="echo-words"),
    pytest.param("echo 'rm -rf /' > /dev/null", id="dev-null"),
    pytest.param("make test 2>&1 >/dev/null", id="duplication"),
    pytest.param("echo error >&2", id="to-stderr"),
    pytest.param("make > >(tee) 2> >(cat >&2)", id="redirect-to-process-substitution"),
    pytest.param("ln -s a b", id="ln-without-force"),
    pytest.param("install -d build", id="install-directories"),
    pytest.param("patch --dry-run -p1 < x.diff", id="patch-dry-run"),
    pytest.param("command -v git", id="command-v"),
    pytest.param("x=$(( 1 > 2 )); (( y > 3 ))", id="arithmetic"),
    pytest.param("if (( n > 3 )); then echo big; fi", id="arithmetic-command"),
    pytest.param("for ((i = 0; i < 3; i++)); do echo $i > /dev/null; done", id="arithmetic-for"),
    pytest.param("echo $(( (1 + 2) > 2 ))", id="arithmetic-nested"),
    pytest.param("# git stash\nls", id="comment"),
    pytest.param("cat <<'EOF'\ngit stash\nrm -rf src\nEOF", id="heredoc-body-is-data"),
    pytest.param("cat <<-EOF\n\tgit reset --hard\n\tEOF\nls", id="heredoc-tabs"),
    pytest.param("docker run --rm img", id="rm-as-option"),
    pytest.param("bash script.sh", id="bash-script"),
    pytest.param("for f in *.py; do echo $f; done", id="for-loop"),
    pytest.param("[[ a > b ]] || true", id="test-brackets"),
]

WRITES = [
    pytest.param("rm a.py", [paths("remove", "a.py")], id="rm"),
    pytest.param("rm -rf build/ dist", [paths("remove", "build/", "dist")], id="rm-rf"),
    pytest.param("rm -f -- -odd", [paths("remove", "-odd")], id="rm-dashdash"),
    pytest.param("rmdir empty", [paths("remove", "empty")], id="rmdir"),
    pytest.param("unlink a", [paths("remove", "a")], id="unlink"),
    pytest.param("rm src/*.py", [paths("remove", "src/*.py")], id="rm-glob"),
    pytest.param("rm 'my file.txt'", [paths("remove", "my file.txt")], id="rm-quoted"),
    pytest.param("mv a.py b.py", [paths("move", "a.py", "b.py")], id="mv"),
    pytest.param("mv -f a b dir/", [paths("move", "a", "b", "dir/")], id="mv-many"),
    pytest.param("mv -t dir a b", [paths("move", "a", "b", "dir")], id="mv-target"),
    pytest.param("cp a.py b.py", [paths("overwrite", "b.py")], id="cp"),
    pytest.param("cp -r src/ backup/", [paths("overwrite", "backup/")], id="cp-r"),
    pytest.param("cp -t dir a b", [paths("overwrite", "dir")], id="cp-target"),
    pytest.param("install -m 644 a b", [paths("overwrite", "b")], id="install"),
    pytest.param("ln -sf a b", [paths("overwrite", "b")], id="ln-force"),
    pytest.param("echo x > a.py", [paths("overwrite", "a.py")], id="redirect"),
    pytest.param("echo x >> a.py", [paths("rewrite", "a.py")], id="append"),
    pytest.param("make &> log.txt", [paths("overwrite", "log.txt")], id="redirect-both"),
    pytest.param("make 2> err.txt", [paths("overwrite", "err.txt")], id="redirect-stderr"),
    pytest.param("echo x >| a", [paths("overwrite", "a")], id="redirect-clobber"),
    pytest.param(">a.py", [paths("overwrite", "a.py")], id="redirect-alone"),
    pytest.param("echo x | tee a b", [paths("overwrite", "a", "b")], id="tee"),
    pytest.param("echo x | tee -a log", [paths("rewrite", "log")], id="tee-append"),
    pytest.param("make | tee >(grep err) build.log", [paths("overwrite", "build.log")], id="tee-process-substitution"),
    pytest.param("sed -i 's/a/b/' a.py", [paths("rewrite", "a.py")], id="sed-i"),
    pytest.param("sed -i.bak -e s/a/b/ a b", [paths("rewrite", "a", "b")], id="sed-i-suffix"),
    pytest.param("sed --in-place 's/a/b/' a", [paths("rewrite", "a")], id="sed-in-place"),
    pytest.param("sed -ni 's/a/b/p' a", [paths("rewrite", "a")], id="sed-cluster"),
    pytest.param("perl -pi -e 's/a/b/' a.py", [paths("rewrite", "a.py")], id="perl-pi"),
    pytest.param("perl -i -pe 's/a/b/' a.py", [paths("rewrite", "a.py")], id="perl-i"),
    pytest.param("truncate -s 0 a.log", [paths("rewrite", "a.log")], id="truncate"),
    pytest.param("patch -p1 < fix.diff", [whole("rewrite")], id="patch-stdin"),
    pytest.param("patch -i fix.diff", [whole("rewrite")], id="patch-input"),
    pytest.param("patch a.py fix.diff", [paths("rewrite", "a.py")], id="patch-file"),
    pytest.param("patch -o out.py a.py fix.diff", [paths("overwrite", "out.py")], id="patch-output"),
    pytest.param("dd if=/dev/zero of=disk.img bs=1M", [paths("overwrite", "disk.img")], id="dd"),
    pytest.param("find . -name '*.pyc' -delete", [paths("remove", ".")], id="find-delete"),
    pytest.param("find src -exec rm {} +", [paths("remove", "src")], id="find-exec-rm"),
    pytest.param("find src -type f -exec sed -i s/a/b/ {} ';'", [paths("rewrite", "src")], id="find-exec-sed"),
    pytest.param("ls | xargs rm", [whole("remove")], id="xargs-rm"),
    pytest.param("git ls-files | xargs -n 1 git checkout", [whole("switch")], id="xargs-git"),
    pytest.param("ls | xargs -I{} mv {} old/", [whole("move")], id="xargs-replace"),
    pytest.param("ls | xargs -I{} sh -c 'rm {}'", [("remove", CWD, ("{}",), True)], id="xargs-sh-c"),
    pytest.param("find . -exec sh -c 'rm \"$1\"' _ {} ';'", [("remove", CWD, ("$1",), True)], id="find-exec-sh-c"),
    pytest.param("for f in *.py; do rm $f; done", [("remove", CWD, ("$f",), True)], id="variable-path"),
    pytest.param("echo x > $OUT", [("overwrite", CWD, ("$OUT",), True)], id="variable-redirect"),
    pytest.param("rm ~/proj/a.py", [("remove", CWD, ("~/proj/a.py",), True)], id="home-path"),
    pytest.param("cd $DIR && rm a", [("remove", "$DIR", ("a",), True)], id="variable-cwd"),
]

COMPOUND = [
    pytest.param("cd src && git checkout .", [paths("restore", ".", cwd="/repo/src")], id="cd-and"),
    pytest.param("cd src; git stash", [whole("stash", cwd="/repo/src")], id="cd-semicolon"),
    pytest.param("cd /srv/x || exit; rm a", [paths("remove", "a", cwd="/srv/x")], id="cd-absolute"),
    pytest.param("cd a && cd ../b && rm c", [paths("remove", "c", cwd="/repo/b")], id="cd-twice"),
    pytest.param("cd a; cd -; rm c", [paths("remove", "c")], id="cd-back"),
    pytest.param("(cd src && git stash); rm a", [whole("stash", "/repo/src"), paths("remove", "a")], id="subshell"),
    pytest.param(
        "{ cd src; rm a; }; rm b",
        [paths("remove", "a", cwd="/repo/src")] * 1 + [paths("remove", "b", cwd="/repo/src")],
        id="group-keeps-cd",
    ),  # fmt: skip
    pytest.param(
        "pushd src && rm a && popd && rm b",
        [paths("remove", "a", cwd="/repo/src"), paths("remove", "b")],
        id="pushd-popd",
    ),  # fmt: skip
    pytest.param("cd src | true; rm a", [paths("remove", "a")], id="cd-in-pipe-stays"),
    pytest.param("true && git stash || git reset --hard", [whole("stash"), whole("reset")], id="and-or"),
    pytest.param("git stash & rm a", [whole("stash"), paths("remove", "a")], id="background"),
    pytest.param("ls\ngit stash\n", [whole("stash")], id="newlines"),
    pytest.param("git \\\n  stash", [whole("stash")], id="line-continuation"),
    pytest.param("echo $(git stash)", [whole("stash")], id="command-substitution"),
    pytest.param(
        'echo "$(cd src && rm a)"; rm b',
        [paths("remove", "a", cwd="/repo/src"), paths("remove", "b")],
        id="substitution-in-quotes",
    ),  # fmt: skip
    pytest.param("echo `git stash`", [whole("stash")], id="backticks"),
    pytest.param("diff <(git stash show) a", [], id="process-substitution-reads"),
    pytest.param("cat <(git stash)", [whole("stash")], id="process-substitution"),
    pytest.param("FOO=1 BAR=2 git reset --hard", [whole("reset")], id="env-prefix"),
    pytest.param("env -i PATH=/bin git stash", [whole("stash")], id="env"),
    pytest.param("env -C sub git clean -f", [paths("clean", ".", cwd="/repo/sub")], id="env-chdir"),
    pytest.param("command git stash", [whole("stash")], id="command"),
    pytest.param("sudo -u bob git stash", [whole("stash")], id="sudo"),
    pytest.param("sudo -D /srv rm a", [paths("remove", "a", cwd="/srv")], id="sudo-chdir"),
    pytest.param("nice -n 10 git stash", [whole("stash")], id="nice"),
    pytest.param("timeout 5 git stash", [whole("stash")], id="timeout"),
    pytest.param("timeout -s KILL 5s git stash", [whole("stash")], id="timeout-signal"),
    pytest.param("nohup git pull &", [whole("pull")], id="nohup"),
    pytest.param("time git stash", [whole("stash")], id="time"),
    pytest.param("bash -c 'git stash'", [whole("stash")], id="bash-c"),
    pytest.param(
        'sh -c "cd src && rm a"; rm b',
        [paths("remove", "a", cwd="/repo/src"), paths("remove", "b")],
        id="sh-c-cd-stays-inside",
    ),  # fmt: skip
    pytest.param("zsh -lc 'git stash'", [whole("stash")], id="zsh-lc"),
    pytest.param("bash -o pipefail -c 'git stash'", [whole("stash")], id="bash-o"),
    pytest.param("bash -c \"bash -c 'git stash'\"", [whole("stash")], id="bash-c-nested"),
    pytest.param("eval 'git stash'", [whole("stash")], id="eval"),
    pytest.param("eval cd src; rm a", [paths("remove", "a", cwd="/repo/src")], id="eval-cd-stays"),
    pytest.param("bash <<EOF\ngit stash\nEOF", [whole("stash")], id="heredoc-to-bash"),
    pytest.param(
        "cat > a.py <<'EOF'\nrm -rf /\nEOF\ngit stash",
        [paths("overwrite", "a.py"), whole("stash")],
        id="heredoc-into-file",
    ),  # fmt: skip
    pytest.param("ls # rm a\ngit stash", [whole("stash")], id="comment-ends-at-newline"),
    pytest.param("if git diff --quiet; then git stash; fi", [whole("stash")], id="if-then"),
    pytest.param("while true; do git pull; done", [whole("pull")], id="while-do"),
    pytest.param("for ((i = 0; i < 3; i++)); do rm a; done", [paths("remove", "a")], id="arithmetic-for-body"),
    pytest.param("if true; then { rm x; }; fi", [paths("remove", "x")], id="group-in-if"),
    pytest.param("f() { git stash; }; f", [whole("stash")], id="function-body"),
    pytest.param("! git stash", [whole("stash")], id="negation"),
    pytest.param(
        "((cd src; rm a); rm b)",
        [paths("remove", "a", cwd="/repo/src"), paths("remove", "b")],
        id="nested-subshells-not-arithmetic",
    ),  # fmt: skip
    pytest.param("echo $((cd src; rm a))", [paths("remove", "a", cwd="/repo/src")], id="substitution-of-subshell"),
    pytest.param("git stash 2>&1 | tail -1", [whole("stash")], id="pipe"),
    pytest.param("g\\it stash", [whole("stash")], id="escaped-letter"),
    pytest.param("'git' \"stash\"", [whole("stash")], id="quoted-words"),
]

# Issue 38's attack round: commands that reach the files by a way the first reading did not see.
REACHED = [
    pytest.param('echo "git stash" | sh', [whole("stash")], id="echo-piped-to-a-shell"),
    pytest.param("printf 'git stash\\n' | bash", [whole("stash")], id="printf-piped-to-a-shell"),
    pytest.param('bash <<< "git reset --hard"', [whole("reset")], id="here-string-to-a-shell"),
    pytest.param('echo "git stash" | grep stash', [], id="echo-piped-to-a-reader"),
    pytest.param("echo hi | sh -c cat", [], id="a-shell-given-its-script"),
    pytest.param("V=stash; git $V", [whole("unread")], id="git-verb-in-a-variable"),
    pytest.param('git "$(echo stash)"', [whole("unread")], id="git-verb-substituted"),
    pytest.param("flock /tmp/l git stash", [whole("stash")], id="flock"),
    pytest.param("flock -w 5 /tmp/l -c 'git stash'", [whole("stash")], id="flock-c"),
    pytest.param("setsid git stash", [whole("stash")], id="setsid"),
    pytest.param("taskset -c 0 git stash", [whole("stash")], id="taskset"),
    pytest.param("chrt 10 git stash", [whole("stash")], id="chrt"),
    pytest.param("su -c 'git stash' bob", [whole("stash")], id="su-c"),
    pytest.param("runuser -u bob -- git stash", [whole("stash")], id="runuser"),
    pytest.param("script -qc 'git stash' /dev/null", [whole("stash")], id="script-c"),
    pytest.param("watch -n 1 git stash", [whole("stash")], id="watch"),
    pytest.param("xvfb-run -a git stash", [whole("stash")], id="xvfb-run"),
    pytest.param("git read-tree HEAD", [whole("reset")], id="read-tree"),
    pytest.param("git read-tree -n HEAD", [], id="read-tree-dry-run"),
    pytest.param("git update-index --assume-unchanged src/a.py", [paths("sweep", "src/a.py")], id="update-index"),
    pytest.param("git checkout-index -f -a", [whole("restore")], id="checkout-index-all"),
    pytest.param("git checkout-index -f -- src/a.py", [paths("restore", "src/a.py")], id="checkout-index-path"),
    pytest.param("git checkout-index -a", [], id="checkout-index-keeps-existing-files"),
    pytest.param("git update-ref HEAD HEAD~1", [whole("switch")], id="update-ref-head"),
    pytest.param("git symbolic-ref HEAD refs/heads/other", [whole("switch")], id="symbolic-ref-head"),
    pytest.param("git symbolic-ref HEAD", [], id="symbolic-ref-read"),
    pytest.param("git worktree remove --force ../other", [whole("clean", "/other")], id="worktree-remove"),
    pytest.param("python3 -c \"import os; os.remove('src/a.py')\"", [paths("rewrite", "src/a.py")], id="python-c"),
    pytest.param("python -c \"print(open('src/a.py').read())\"", [], id="python-c-reading"),
    pytest.param("perl -e 'unlink \"src/a.py\"'", [paths("rewrite", "src/a.py")], id="perl-e"),
    pytest.param('node -e \'require("fs").rmSync("build")\'', [paths("rewrite", "fs", "build")], id="node-e"),
    pytest.param("python -m pytest -q", [], id="python-module"),
    pytest.param("rsync -a /tmp/x/ src/", [paths("overwrite", "src/")], id="rsync"),
    pytest.param("rsync -a src/ host:/backup/", [], id="rsync-to-another-machine"),
    pytest.param("tar xzf /tmp/x.tgz -C src", [paths("overwrite", "src")], id="tar-x"),
    pytest.param("tar -xf x.tar", [paths("overwrite", ".")], id="tar-x-here"),
    pytest.param("tar czf out.tgz src", [], id="tar-c"),
    pytest.param("unzip -o x.zip -d src", [paths("overwrite", "src")], id="unzip"),
    pytest.param("unzip -l x.zip", [], id="unzip-list"),
]

UNREADABLE = [
    pytest.param("echo 'unbalanced; git stash", ["stash"], id="open-single-quote"),
    pytest.param('echo "x; git reset --hard', ["reset"], id="open-double-quote"),
    pytest.param("echo $(git checkout main", ["switch"], id="open-substitution"),
    pytest.param("case $x in a) rm f;; esac", ["remove"], id="case"),
    pytest.param("echo `rm -rf src", ["remove"], id="open-backtick"),
    pytest.param("( " * 100 + "git stash" + " )" * 100, ["stash"], id="deep-nesting"),
    pytest.param("echo 'x' > out; cat 'y", ["overwrite"], id="redirect"),
    pytest.param("echo 'x; sed -i s/a/b/ f", ["rewrite"], id="sed-i"),
    pytest.param("rm a; " * 8_000, ["remove"], id="more-tokens-than-any-command"),
]


@pytest.mark.parametrize(("command", "expected"), GIT)
def test_git_verbs(command: str, expected: list) -> None:
    assert _seen(command) == expected


@pytest.mark.parametrize("command", READS)
def test_a_command_that_only_reads_says_nothing(command: str) -> None:
    assert effects(command, CWD) == []


@pytest.mark.parametrize(("command", "expected"), WRITES)
def test_shell_writes(command: str, expected: list) -> None:
    assert _seen(command) == expected


@pytest.mark.parametrize(("command", "expected"), COMPOUND)
def test_compound_commands_are_read_whole(command: str, expected: list) -> None:
    assert _seen(command) == expected


@pytest.mark.parametrize(("command", "expected"), REACHED)
def test_every_way_a_command_reaches_the_files_is_read(command: str, expected: list) -> None:
    assert _seen(command) == expected


# Claude Code keeps the Bash tool's directory from one call to the next: a model already in `src` that
# writes `cd src; rm auth.py` removes `src/auth.py`, its `cd` failing. Run in /repo/src, src/src missing:
HERE, GONE = "/repo/src", "/repo/src/src"
FAILING_CD = [
    pytest.param("cd src; rm a", [paths("remove", "a", cwd=GONE), paths("remove", "a", cwd=HERE)], id="semicolon"),
    pytest.param("cd src\nsed -i s/a/b/ a", [paths("rewrite", "a", cwd=w) for w in (GONE, HERE)], id="newline"),
    pytest.param(
        "cd src || echo x > a", [paths("overwrite", "a", cwd=GONE), paths("overwrite", "a", cwd=HERE)], id="or"
    ),
    pytest.param(
        "cd src && rm a; rm b",
        [paths("remove", "a", cwd=GONE), paths("remove", "b", cwd=GONE), paths("remove", "b", cwd=HERE)],
        id="after-the-and-chain",
    ),  # fmt: skip
    pytest.param(
        "{ cd src; }; cd lib; rm a", [paths("remove", "a", cwd=w) for w in (GONE + "/lib", HERE + "/lib")], id="group"
    ),
    pytest.param(
        "mkdir new && cd new && git add .", [paths("sweep", ".", cwd=HERE + "/new")], id="and-stops-a-failure"
    ),
    pytest.param("cd lib; rm a", [paths("remove", "a", cwd=HERE + "/lib")], id="there"),
    pytest.param("cd $D; rm a", [("remove", "$D", ("a",), True)], id="variable"),
]


@pytest.mark.parametrize(("command", "expected"), FAILING_CD)
def test_a_cd_into_a_missing_directory_may_leave_the_shell_where_it_was(command: str, expected: list) -> None:
    there = {"/repo", HERE, HERE + "/lib"}
    assert [(e.kind, e.cwd, e.paths, e.whole) for e in effects(command, HERE, there.__contains__)] == expected


@pytest.mark.parametrize(("command", "kinds"), UNREADABLE)
def test_text_that_cannot_be_read_is_judged_by_its_words(command: str, kinds: list) -> None:
    found = effects(command, CWD)
    assert [e.kind for e in found] == kinds
    assert all(e.whole and e.cwd == CWD and e.paths == () for e in found)


def test_an_effect_names_its_own_segment_for_the_person() -> None:
    found = effects("cd src && FOO=1 git stash -u && make", CWD)
    assert found == [Effect("stash", "/repo/src", (), True, "FOO=1 git stash -u")]


def test_a_mebibyte_of_heredoc_is_data_and_read_precisely() -> None:
    command = "cat > big.py <<'EOF'\n" + "rm -rf src; git stash\n" * 50_000 + "EOF\ngit status"
    assert _seen(command) == [paths("overwrite", "big.py")]


TOUCHES = [
    pytest.param("git stash", "/repo/src/a.py", True, id="whole"),
    pytest.param("rm src/a.py", "/repo/src/a.py", True, id="the-file"),
    pytest.param("rm src/a.py", "/repo/src/a.pyc", False, id="another-file"),
    pytest.param("rm -rf src", "/repo/src/deep/a.py", True, id="a-directory-above"),
    pytest.param("rm -rf src/", "/repo/src/a.py", True, id="a-directory-with-slash"),
    pytest.param("rm -rf sr", "/repo/src/a.py", False, id="a-prefix-is-not-a-directory"),
    pytest.param("cd src && git checkout .", "/repo/src/a.py", True, id="dot-in-cwd"),
    pytest.param("cd docs && git checkout .", "/repo/src/a.py", False, id="dot-elsewhere"),
    pytest.param("rm src/*.py", "/repo/src/a.py", True, id="glob"),
    pytest.param("rm src/*.py", "/repo/src/a.txt", False, id="glob-not-matching"),
    pytest.param("git add '*.py'", "/repo/src/a.py", True, id="pathspec-crosses-directories"),
    pytest.param("rm ../repo/src/a.py", "/repo/src/a.py", True, id="dot-dot"),
    pytest.param("sudo rm -rf /", "/repo/src/a.py", True, id="root"),
    pytest.param("rm /abs/a.py", "/repo/a.py", False, id="absolute-elsewhere"),
]


@pytest.mark.parametrize(("command", "path", "expected"), TOUCHES)
def test_touches_says_whether_an_effect_reaches_a_file(command: str, path: str, expected: bool) -> None:
    (effect,) = effects(command, CWD)
    assert touches(effect, path) is expected


def test_an_effect_is_frozen_and_compares_by_value() -> None:
    effect = Effect("stash", CWD, (), True, "git stash")
    with pytest.raises(AttributeError):
        effect.kind = "reset"  # type: ignore[misc]
    assert effect == Effect("stash", CWD, (), True, "git stash") != Effect("stash", CWD, (), False, "git stash")
    assert len({effect, Effect("stash", CWD, (), True, "git stash")}) == 1


def test_words_are_cut_for_a_huge_segment() -> None:
    (found,) = effects("rm " + "a" * 100_000, CWD)
    assert len(found.words) <= 300


def test_every_kind_is_declared() -> None:
    tables = GIT + WRITES + COMPOUND + REACHED
    seen = {kind for param in tables for (kind, *_) in param.values[1]}
    assert seen <= KINDS
    assert KINDS - seen == set()


# Any word, made safe as one shell word: what surrounds a command cannot change how it is read.
_WORD = st.text(min_size=1, max_size=12).map(shlex.quote)
_SEPARATOR = st.sampled_from([" && ", " || ", "; ", " | ", "\n", " & "])
_PREFIX = st.sampled_from(["", "FOO=1 ", "env X=1 ", "command ", "sudo ", "nice ", "timeout 5 ", "time "])
_READING = st.sampled_from(["ls -la", "git status", "cat a", "grep -r x .", "echo hi", "git log -1", "true"])


@given(st.text(max_size=300))
def test_never_raises_on_any_text(text: str) -> None:
    found = effects(text, CWD)
    assert all(isinstance(e, Effect) and e.kind in KINDS for e in found)


@given(st.text(alphabet="git stash rm>|&;()'\"`$\\{}\n<#-ca=", max_size=200))
def test_never_raises_on_shell_punctuation(text: str) -> None:
    effects(text, CWD)


@given(st.lists(st.tuples(_READING, st.lists(_WORD, max_size=3)), max_size=3), _SEPARATOR, _PREFIX, _SEPARATOR,
       st.lists(st.tuples(_READING, st.lists(_WORD, max_size=3)), max_size=3))  # fmt: skip
def test_git_stash_as_a_command_word_is_always_seen(
    before: list, left: str, prefix: str, right: str, after: list
) -> None:
    def commands(items: list) -> list:
        return [" ".join([name, *words]) for name, words in items]

    command = left.join([*commands(before), prefix + "git stash"]) + right + right.join(commands(after))
    assert any(e.kind == "stash" or e.whole for e in effects(command, CWD)), command


_DESTRUCTIVE = {"git stash": "stash", "git reset --hard": "reset", "git checkout": "switch", "git clean": "clean"}
_DESTRUCTIVE.update({"git pull": "pull", "rm": "remove", "mv": "move", "cp": "overwrite", "sed -i": "rewrite"})


@given(st.sampled_from(sorted(_DESTRUCTIVE)), st.text(alphabet=st.characters(blacklist_characters="'\"\\`$#<\n")))
def test_unreadable_text_with_a_destructive_word_is_never_silent(command: str, text: str) -> None:
    found = effects(f"{command} {text} 'open", CWD)
    assert _DESTRUCTIVE[command] in {e.kind for e in found if e.whole}


# Commands of the tables that leave the directory as it was: joined, each keeps its own effects.
_SAMPLES = [p.values[0] for p in GIT + WRITES + READS if not ("\n" in p.values[0] or "cd " in p.values[0])]


@given(st.sampled_from(_SAMPLES), st.sampled_from(_SAMPLES), st.sampled_from([" && ", " || ", "; ", "\n"]))
def test_joining_commands_joins_their_effects(first: str, second: str, separator: str) -> None:
    assert _seen(first + separator + second) == _seen(first) + _seen(second)


@given(st.sampled_from(_SAMPLES), st.sampled_from(["src", "/abs/dir", "a/../b"]))
def test_cd_first_moves_every_effect_there(command: str, directory: str) -> None:
    moved = "/abs/dir" if directory.startswith("/") else "/repo/" + directory.replace("a/../", "")
    assert _seen(f"cd {directory} && {command}") == _seen(command, moved)


@pytest.mark.timing
@pytest.mark.parametrize("command", ["ls -la", "pytest -q tests/", "npm run build", "git status", "git log -3"])
def test_an_ordinary_command_is_answered_in_well_under_a_millisecond(command: str) -> None:
    """The best of five rounds, in this process's CPU time: a loaded machine slows rounds, not the best one."""
    rounds = []
    for _ in range(5):
        started = time.process_time()
        for _ in range(100):
            effects(command, CWD)
        rounds.append((time.process_time() - started) / 100)
    assert min(rounds) < 0.0002, rounds


ADVERSARIAL = [
    pytest.param(lambda n: "'" + "a" * n, id="open-quote"),
    pytest.param(lambda n: ("$(" * 40 + "x") * (n // 80), id="open-substitutions"),
    pytest.param(lambda n: ('echo `a` $(b) "$(c)" ${d} > e; ' * n)[:n], id="many-substitutions"),
    pytest.param(lambda n: ("bash -c 'sh -c \"eval rm a\"'; " * n)[:n], id="nested-shells"),
    pytest.param(lambda n: ("cat <<E\n" * n)[:n], id="many-heredocs"),
    pytest.param(lambda n: ("git stash && " * n)[:n], id="many-effects"),
    pytest.param(lambda n: ("( " * n)[:n], id="open-subshells"),
    pytest.param(lambda n: ("\\" * n), id="backslashes"),
    pytest.param(lambda n: ("((;" * n)[:n], id="open-double-parens"),
    pytest.param(lambda n: ("((x));" * n)[:n], id="arithmetic"),
    pytest.param(lambda n: ("((;" * 19 + "x" + "))" * 19 + ";") * (n // 80), id="nested-double-parens"),
    pytest.param(lambda n: "'" + ("1" * 999 + "> ") * (n // 1001), id="unreadable-redirects"),
    pytest.param(lambda n: "'git " + "stash rm mv cp " * (n // 15), id="unreadable-words"),
    pytest.param(lambda n: ("${" * 19 + "x" + "}" * 19 + " ") * (n // 40), id="nested-braces"),
    pytest.param(lambda n: ("cat <<E\n" + "x\n" * 100 + "E\n") * (n // 210), id="heredoc-bodies"),
    pytest.param(lambda n: ("${" * n)[:n], id="open-braces"),
]


@pytest.mark.timing
@pytest.mark.parametrize("make", ADVERSARIAL)
def test_reading_time_grows_linearly(make) -> None:  # noqa: ANN001
    """A mebibyte costs about 32 times what 32 KiB costs, never a quadratic's 1 024 times; no text hangs."""
    small, large = make(32 << 10), make(1 << 20)
    started = time.process_time()
    effects(small, CWD)
    small_took = time.process_time() - started
    started = time.process_time()
    effects(large, CWD)
    large_took = time.process_time() - started
    assert large_took < 32 * 4 * max(small_took, 0.002) + 0.5, (small_took, large_took)
