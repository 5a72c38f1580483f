"""Per-family figures of the held-out redaction corpus (issue 39): our ``redact``, and detect-secrets for scale.

    python bench/redaction_heldout.py

detect-secrets is not a dependency of the project: its row is printed only when it can be
imported (install it in a throwaway environment and put that environment's site-packages on
PYTHONPATH). Each text is written to a file and scanned as detect-secrets scans files; every
line it flags is then masked.
"""

import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "lib"), str(REPO / "tests")]

from blackboard.redact import redact  # noqa: E402
from heldout_corpus import load, score, table  # noqa: E402


def detect_secrets_redactor() -> Optional[Callable[[str], str]]:
    """A redactor made of detect-secrets' default plugins, or None when detect-secrets is not installed."""
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def redact_with_detect_secrets(text: str) -> str:
        # Scanned as a file, the way its hook scans a change (its ad hoc scan reports every word).
        # It reports lines: some plugins report a fragment (``ghp`` for a GitHub token), so each
        # line it flags is masked whole.
        with tempfile.TemporaryDirectory() as folder, default_settings():
            path = Path(folder) / "paste.txt"
            path.write_text(text, encoding="utf-8", newline="")
            flagged = {s.line_number for s in scan_file(str(path))}
        lines = text.split("\n")
        return "\n".join("[REDACTED]" if n in flagged else line for n, line in enumerate(lines, start=1))

    return redact_with_detect_secrets


def main() -> None:
    records = load()
    print(table(score(redact, records), "blackboard.redact.redact"), flush=True)
    other = detect_secrets_redactor()
    if other is None:
        print("\ndetect-secrets: not importable, skipped")
    else:
        print("\n" + table(score(other, records), "detect-secrets (default plugins, flagged lines masked)"))


if __name__ == "__main__":
    main()
