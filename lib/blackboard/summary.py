"""What a session's handoff says, gathered from every source and rendered (docs/adr/0021-session-digest.md).

What was asked and where it stopped come from the hooks' digest (the transcript where the
hooks said nothing); open work from the board, Claude Code's own task list and the
project's ledger; what changed from the edits the hooks saw and from git. No model is asked.
Everything is bounded and redacted before it is written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from . import claude_tasks, handoff
from .changes import Changes, since
from .clock import epoch_seconds, format_utc
from .digest import MAX_NAMED_FILES, Digest, read_digest
from .entries import Entry, read_tail_entries
from .gitinfo import find_git
from .handoff import FRONT_MATTER_BYTES, MAX_HANDOFF_BYTES, dump_front_matter, handoff_fields
from .ledger import MAX_TEXT, Item, Ledger, board_key, clip, is_key, merge
from .live import Liveness, Presence, read_presence
from .meta import Meta
from .paths import PathResolver
from .redact import redact, redact_prefix
from .render import (
    BoardState,
    active_sessions_section,
    board_state,
    bullet,
    inline,
    open_section,
    render_sections,
    section,
    split_tasks,
    unreadable_section,
)
from .settings import Settings
from .transcript import inside_claude_dir, read_transcript

ASKED, STOPPED, CHANGED = "What was asked", "Where it stopped", "What changed"
LEDGER_TASK_BYTES = 4 * 1024 * 1024
MAX_PROMPT_SHOWN = 500
MAX_MESSAGE_SHOWN = 1500
MAX_OTHERS_PATHS = 10  # of another live session's uncommitted files, the ones a handoff names
MAX_OTHERS_NAMED = 5  # other live sessions whose uncommitted files a handoff's body names; the rest are counted


def handoff_text(
    resolver: PathResolver, meta: Meta, settings: Settings, final: bool = True, git_by: float | None = None
) -> str:
    """The handoff a session leaves, bounded in size and with secrets redacted.

    ``final=False`` (Stop's draft after every turn) leaves git out: it is asked once, when
    the session ends or is found abandoned, until ``git_by`` (``changes.since``).
    """
    session_id = meta["session_id"]
    state = board_state(resolver, session_id)
    digest = session_digest(resolver, meta, settings, final) if settings.digest else Digest()
    top = _checkout(resolver, meta)
    changes = _changes(top, meta, settings.environ, git_by) if settings.digest and final else None
    latest = handoff.read_handoff(resolver.latest_handoff_path())
    before = Ledger.from_fields(latest[0]) if latest else Ledger([], [])
    ledger = merge(own_session_ledger(resolver, meta, state, settings), before)
    fields = handoff_fields(meta, 0, len(state.done), state.note_count, ledger.claimed)
    if final:  # what other live sessions did is theirs: their files, and whether this one did anything at all
        presence, live_others = _presences(resolver, session_id, settings)
        if changes is not None and top is not None:
            changes.split(_own_files(digest, presence, top), _files_in(live_others, top))
        if did_nothing(state, _same_work(ledger, before), digest, presence, changes, bool(live_others)):
            fields["nothing_done"] = True  # the latest handoff stays as it is (handoff.publish_latest)
    fields.update(ledger.to_fields())
    if handoff.fit_open_work(fields):  # thousands of items: the oldest counted, not kept
        ledger = Ledger.from_fields(fields)
    fields["open_tasks"] = len(ledger.open) + ledger.cut
    fields.update(digest_fields(digest, changes))
    body = (
        f"# Handoff from session {session_id}\n\n"
        + unreadable_section(state)
        + asked_section(digest)
        + stopped_section(digest)
        + open_section(ledger, session_id)
        + changed_section(digest, changes)
        + render_sections(state, ("done", "context"))
    )
    notes, others = render_sections(state, ("notes",)), active_sessions_section(resolver, session_id)
    return bounded(redact_fields(fields), body, notes, others)


def bounded(fields: dict[str, object], body: str, notes: str, others: str) -> str:
    """Front matter and body within ``MAX_HANDOFF_BYTES``: the oldest notes give way first, with a mark.

    The open work may take the front matter past ``FRONT_MATTER_BYTES`` (``ledger.MAX_BYTES``):
    the budget grows by as much, so the body keeps its room and a cut never falls in the front matter.
    """
    head = dump_front_matter(fields) + "\n"
    limit = MAX_HANDOFF_BYTES + max(len(head.encode()) - FRONT_MATTER_BYTES, 0)
    room = limit - len(head.encode()) - len(body.encode()) - len(others.encode()) - 2048
    if len(notes.encode()) > room:
        notes = (
            notes.encode()[: max(room, 0)].decode("utf-8", "ignore").rpartition("\n- ")[0] + "\n- … older notes cut\n"
        )
    text = head + redact(body + "\n" + notes + "\n" + others)
    if len(text.encode()) > limit:
        text = text.encode()[:limit].decode("utf-8", "ignore") + "\n\n[… handoff cut to size]\n"
    return text


def session_digest(resolver: PathResolver, meta: Meta, settings: Settings, final: bool = True) -> Digest:
    """The hooks' digest of the session; for a final handoff, its transcript where the hooks said nothing.

    That is a session whose hooks recorded no prompt or no last message, or one whose board
    began at a resume (it ran before the plugin was installed): its requests come whole from
    the transcript.

    Stop's draft never reads the transcript: the hooks of that very turn have just spoken.
    """
    session_id = meta["session_id"]
    digest = read_digest(resolver.digest_path(session_id), resolver.digest_summary_path(session_id))
    began_before = meta.get("source") == "resume"  # its board began at a resume: the hooks missed its start
    if not final or (digest.first_prompt is not None and digest.last_message is not None and not began_before):
        return digest
    path = meta.get("transcript_path")
    if not inside_claude_dir(settings.claude_dir, path):
        return digest
    recovered = read_transcript(str(path))
    if digest.first_prompt is None or (began_before and recovered.first_prompt is not None):
        recovered.take_edits(digest)
        if digest.last_message is not None:  # the Stop hook's word is the freshest
            recovered.last_message, recovered.message_source = digest.last_message, "hooks"
        return recovered
    digest.last_message, digest.message_source = recovered.last_message, "transcript"  # killed before its Stop
    return digest


def _checkout(resolver: PathResolver, meta: Meta) -> str | None:
    """The checkout the session ran in, links resolved: the one around its ``cwd``, else the resolver's.

    A recovery runs in another session, which may be in another clone of the same project.
    """
    found = None
    cwd = meta.get("cwd")
    if isinstance(cwd, str) and os.path.isabs(cwd):
        try:
            found = find_git(cwd)
        except ValueError:  # a NUL or a lone surrogate: no path the system can take
            found = None
    toplevel = found.toplevel if found else resolver.project.toplevel
    return os.path.realpath(toplevel) if toplevel else None  # as live sessions name their checkouts (``live.locate``)


def _changes(toplevel: str | None, meta: Meta, environ: Mapping[str, str], git_by: float | None) -> Changes:
    """Git's word on the session's checkout ``toplevel``: commits since the session's start, files uncommitted."""
    start, started = meta.get("start_head"), meta.get("started")
    started_at = format_utc(epoch_seconds(started) or time.time())  # a date git reads, whatever the file said
    return since(toplevel, start if isinstance(start, str) else None, started_at, environ, git_by)


def _presences(resolver: PathResolver, session_id: str, settings: Settings) -> tuple[Presence, dict[str, Presence]]:
    """What the session recorded itself (``_live.jsonl``), and what each other live session of the project edited
    within the edit window (all it edited, with the guard off)."""
    since = time.time() - settings.edit_window if settings.edit_window > 0 else 0.0
    others = {
        meta["session_id"]: read_presence(resolver.live_path(meta["session_id"]), since)
        for meta in Liveness(resolver, settings).others(exclude=session_id)
    }
    return read_presence(resolver.live_path(session_id)), others


def _own_files(digest: Digest, presence: Presence, top: str) -> set[str]:
    """The files of checkout ``top`` the session edited: its edit tools' and the shell writes its hooks saw."""
    recorded = {path for where, path in presence.edits if where == top}
    return recorded | {path for path in digest.edits if not os.path.isabs(path)}


def _files_in(others: dict[str, Presence], top: str) -> dict[str, dict[str, float]]:
    """Each other session's files edited in checkout ``top``, with when."""
    return {
        session: {path: at for (where, path), at in presence.edits.items() if where == top}
        for session, presence in others.items()
    }


def did_nothing(
    state: BoardState, same_work: bool, digest: Digest, presence: Presence, changes: Changes | None, others: bool
) -> bool:
    """Whether a session did nothing another session would continue from (docs/adr/0034-handoffs-with-parallel-
    sessions.md): no edit, no board entry, no commit or other move of its checkout's HEAD, and the open work it
    leaves is the latest handoff's (``same_work``: it opened, closed and claimed nothing, on its board or in
    Claude Code's list). Requests and answers alone are nothing.

    Commits since its start are its own when it moved HEAD itself, or when no other session is live to have
    made them.
    """
    board = state.open or state.done or state.context or state.notes or state.note_count or state.problems
    edits = digest.edits or digest.unnamed_edits or presence.edits
    commits = presence.moves or (changes is not None and changes.commits and not others)
    return same_work and not (board or edits or commits)


def _same_work(ledger: Ledger, latest: Ledger) -> bool:
    """Whether ``ledger`` says of open work what the latest handoff's says: the same items, claims and closings.

    Then skipping the handoff loses nothing of the ledger (docs/adr/0022-open-work-ledger.md).
    """

    def said(found: Ledger) -> tuple[set[tuple[str, str, str]], set[str], dict[str, int]]:
        return {(i.key, i.status, i.by) for i in found.open}, set(found.closed), found.unread_files

    return said(ledger) == said(latest)


def own_session_ledger(resolver: PathResolver, meta: Meta, state: BoardState, settings: Settings) -> Ledger:
    """The session's own open work and closings, which ``merge`` folds into the project's (the latest handoff's).

    What the session did not read whole (Claude Code's list: ``claude_tasks.read_tasks``) it does
    not speak for: none of those items is closed for not being listed.

    A board read only in part, or with blocks that could not be read, does not speak for all
    of its items: then nothing it does not list is taken for closed.
    """
    session_id = meta["session_id"]
    board_tasks, whole_board_read = every_task(resolver, session_id)
    # Claude Code's list is read whole only where the session keeps it: with the digest on, in the folder
    # its own hooks named (a recovery runs in another session, which may have another CLAUDE_CONFIG_DIR)
    here = meta.get("claude_dir", settings.claude_dir) == settings.claude_dir
    claude_code = (
        claude_tasks.read_tasks(settings.claude_dir, session_id)
        if settings.digest and here
        else claude_tasks.TaskList()
    )
    own = own_ledger(session_id, board_tasks, claude_code.tasks)
    own.speaks_for = session_id if whole_board_read else ""
    own.unread = () if claude_code.whole else ("cc",)
    own.unread_files = {session_id: claude_code.unread} if claude_code.unread else {}
    if not claude_code.whole:  # what its own last handoff (a draft, say) said of that list still holds
        listed = {item.key for item in own.open}
        earlier = handoff.read_handoff(resolver.handoff_path(session_id))
        said = Ledger.from_fields(earlier[0]) if earlier else Ledger([], [])
        own.open += [i for i in said.open if i.origin == session_id and i.kind == "cc" and i.key not in listed]
        if not claude_code.unread and session_id in said.unread_files:  # not read at all this time
            own.unread_files = {session_id: said.unread_files[session_id]}
    if not whole_board_read:
        state.problems.append(f"active-tasks.md: over {LEDGER_TASK_BYTES >> 20} MiB; only its last part is read")
    return own


def every_task(resolver: PathResolver, session_id: str) -> tuple[list[Entry], bool]:
    """The board's tasks for the ledger (its last ``LEDGER_TASK_BYTES``), and whether that is all of them, readable."""
    path = resolver.board_file(session_id, "tasks")
    found, problems = read_tail_entries(path, LEDGER_TASK_BYTES)
    try:
        return found, os.path.getsize(path) <= LEDGER_TASK_BYTES and not problems
    except OSError:
        return found, not problems


def own_ledger(session_id: str, board_tasks: list[Entry], tasks: list[claude_tasks.ClaudeTask]) -> Ledger:
    """The session's own open items, newest first (Claude Code's, then its board's), and closed keys."""
    still_open, closed_tasks = split_tasks(board_tasks)
    items = [_board_item(session_id, task) for task in still_open]
    closed = [board_key(session_id, task.fields, task.id) for task in closed_tasks]
    for task in tasks:
        key = f"{session_id}/cc{task.number}"
        if task.status in claude_tasks.UNFINISHED:
            by = "Claude Code" if task.status == "in_progress" else ""
            items.append(Item(key, _clean(task.subject), "claimed" if by else "open", by))
        elif task.status == "completed":
            closed.append(key)
    return Ledger(items[::-1], closed[::-1])


def _board_item(session_id: str, task: Entry) -> Item:
    who = _clean(task.fields.get("claimed_by", ""))
    return Item(board_key(session_id, task.fields, task.id), _clean(task.body), "claimed" if who else "open", who)


def _clean(text: str) -> str:
    """What the ledger keeps of a text: redacted before it is cut to one short line."""
    return clip(redact_prefix(text, MAX_TEXT * 2)[0])


def digest_fields(digest: Digest, changes: Changes | None) -> dict[str, object]:
    """The digest as front matter: what ``handoff --json`` gives and the next session's context reads."""
    asked: dict[str, object] = {
        "first": _cut(digest.first_prompt, MAX_PROMPT_SHOWN),
        "latest": [_cut(p, MAX_PROMPT_SHOWN) for p in digest.latest_prompts],
        "count": digest.prompt_count,
        "source": digest.source,
    }
    changed: dict[str, object] = {"files": [{"path": p, "edits": n} for p, n in digest.shown_files()]}
    if digest.more_files:
        changed["more_files"] = digest.more_files
    if digest.unnamed_edits:
        changed["unnamed_edits"] = digest.unnamed_edits
    if not digest.complete:  # the counts are "at least": part of the digest is not read yet
        asked["complete"] = changed["complete"] = False
    if changes is not None:
        changed["commits"] = [{"sha": sha, "subject": inline(redact(subject), 200)} for sha, subject in changes.commits]
        changed.update(more_commits=changes.more_commits, uncommitted=changes.uncommitted, problem=changes.problem)
        if changes.others:  # counted apart from ``uncommitted``: files another live session edited
            changed["uncommitted_others"] = [
                {"session": session, "files": len(paths), "paths": [_cut(p, 200) for p in paths[:MAX_OTHERS_PATHS]]}
                for session, paths in changes.others.items()
            ]
    stopped = _cut(digest.last_message, MAX_MESSAGE_SHOWN)
    return {"asked": asked, "stopped": stopped, "stopped_source": digest.message_source, "changed": changed}


def _cut(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "…"


def asked_section(digest: Digest) -> str:
    where = " (from the transcript)" if digest.source == "transcript" else ""
    lines = []
    if digest.first_prompt is not None:
        lines.append(bullet(f"first request{where}: {_cut(digest.first_prompt, MAX_PROMPT_SHOWN)}"))
    count = digest.prompt_count
    for offset, prompt in enumerate(digest.latest_prompts):
        number = count - len(digest.latest_prompts) + offset + 1
        which = f"request {number} of {count}" if digest.complete else f"a latest request (at least {count} in all)"
        lines.append(bullet(f"{which}{where}: {_cut(prompt, MAX_PROMPT_SHOWN)}"))
    return section(ASKED, lines)


def stopped_section(digest: Digest) -> str:
    message = _cut(digest.last_message, MAX_MESSAGE_SHOWN)
    where = "the transcript" if digest.message_source == "transcript" else "the Stop hook"
    return section(STOPPED, [bullet(f"last assistant message ({where}): {message}")] if message else [])


def changed_section(digest: Digest, changes: Changes | None) -> str:
    lines = [
        bullet(f"`{inline(path, 200)}`: {n} edit{'s' if n > 1 else ''} (edit tools)")
        for path, n in digest.shown_files()
    ]
    if digest.more_files:
        lines.append(bullet(f"… and {digest.more_files} more files, each edited less"))
    if digest.unnamed_edits:
        lines.append(bullet(f"… and {digest.unnamed_edits} edits to files past the first {MAX_NAMED_FILES} named"))
    if not digest.complete:
        lines.append(bullet("counted from part of the session's digest, the rest not read yet: at least these"))
    if changes is None:
        lines.append(bullet("commits and uncommitted files: counted when the session ends"))
        return section(CHANGED, lines)
    lines += [bullet(f"commit `{sha}` {inline(redact(subject), 200)}") for sha, subject in changes.commits]
    if changes.more_commits:
        lines.append(bullet(f"… and more commits (`git log {len(changes.commits)}..`)"))
    if changes.uncommitted is not None:
        lines.append(bullet(uncommitted_line(changes.uncommitted, changes.others)))
    if changes.problem:
        lines.append(bullet(f"git: {inline(changes.problem, 120)}"))
    return section(CHANGED, lines)


def uncommitted_line(own: int, others: dict[str, list[str]]) -> str:
    """``2 files left uncommitted by this session (git status); 1 more is live session 5f1c8a2e's (`src/auth.py`)``."""
    files = f"{own} file{'' if own == 1 else 's'} left uncommitted"
    if not others:
        return f"{files} (git status)"
    named = list(others.items())[:MAX_OTHERS_NAMED]
    theirs = [
        f"{len(paths)} more {'is' if len(paths) == 1 else 'are'} live session {inline(session[:8])}'s ("
        + ", ".join(f"`{inline(path, 200)}`" for path in paths[:MAX_OTHERS_PATHS])
        + (", …" if len(paths) > MAX_OTHERS_PATHS else "")
        + ")"
        for session, paths in named
    ]
    rest = [paths for _, paths in list(others.items())[MAX_OTHERS_NAMED:]]
    if rest:
        count = sum(len(paths) for paths in rest)
        theirs.append(f"{count} more are {len(rest)} other live sessions' (`blackboard who` names them)")
    return f"{files} by this session (git status); " + "; ".join(theirs)


def redact_fields(fields: dict[str, object]) -> dict[str, object]:
    """Front matter with every string in it redacted, however deep.

    The ledger's keys and statuses are of the plugin's own shapes (``ledger.is_key``, ``open`` or
    ``claimed``), and the session's own items were redacted as they were read (``_clean``): what
    the other items say is redacted, so thousands of the session's own tasks cost one pass each.
    """
    own = fields.get("session_id")
    return {key: _redact_field(key, value, own) for key, value in fields.items()}


def _redact_field(key: str, value: object, own: object) -> object:
    if key == "closed_work" and isinstance(value, list) and all(is_key(item) for item in value):
        return value
    if key == "open_work" and isinstance(value, list):
        return [_redact_item(item, own) for item in value]
    return redact_value(value)


def _redact_item(item: object, own: object) -> object:
    if not isinstance(item, dict) or not is_key(item.get("key")):
        return redact_value(item)
    if item["key"].rpartition("/")[0] == own:
        return item
    return {name: redact_value(value) if name not in ("key", "status") else value for name, value in item.items()}


def redact_value(value: object) -> object:
    """``value`` with every string in it redacted, however deep."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    return value
