"""ADR 23's figures: both redaction corpora through `blackboard.redact` and through Yelp's detect-secrets.

The project's own corpus (tests/unit/test_redact_corpus.py) and, when it is there, the held-out one
(tests/fixtures/redaction-heldout/*.jsonl, or the folder HELDOUT_CORPUS names), each per family: for
a secret, whether it is gone; for a near miss, whether it came back unchanged.

detect-secrets is never installed in the plugin's environment. It runs in a scratch one, named by
DETECT_SECRETS_PYTHON (default /tmp/ds-venv/bin/python):

    python3 -m venv /tmp/ds-venv && /tmp/ds-venv/bin/pip install detect-secrets
    .venv/bin/python bench/redaction_corpus.py

A shape counts as redacted when its secret is gone and its context stays (the corpus test's own
check). detect-secrets reports findings rather than rewriting text, so its redaction replaces each
finding's value; "flagged" counts a text with any finding at all. Times are medians of fresh
processes on this machine; only figures measured side by side mean anything.
"""

import importlib.util
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "lib"), str(REPO / "tests")]

from blackboard.redact import REDACTED, redact  # noqa: E402

DS_PYTHON = os.environ.get("DETECT_SECRETS_PYTHON", "/tmp/ds-venv/bin/python")
HELDOUT = Path(os.environ.get("HELDOUT_CORPUS", REPO / "tests" / "fixtures" / "redaction-heldout"))
LEAK_RUN = 8  # the held-out corpus counts a secret leaked while 8 of its characters in a row are shown
# The own corpus's groups, as test_redact_corpus.py names them (issue 39's families in ISSUE_39_FAMILIES).
OWN_GROUPS = {
    "vendor tokens": "VENDOR_TOKENS",
    "private keys": "PRIVATE_KEYS",
    "password hashes": "PASSWORD_HASHES",
    "config values": "CONFIG_VALUES",
    "connection strings": "CONNECTION_STRINGS",
    "headers": "HEADERS",
    "command lines (issue 21)": "COMMAND_LINES",
    "URLs": "URLS",
    "command-line passwords (issue 32)": "COMMAND_LINE_PASSWORDS",
    "name and value apart (issue 32)": "NAME_AND_VALUE",
    "machine-written": "MACHINE_WRITTEN",
    "words and dots": "WORDS_AND_DOTS",
}


@dataclass(frozen=True)
class Sample:
    """A corpus text: a secret that must go (``secret``) or a near miss (``secret`` None) in a family."""

    family: str
    text: str
    secret: Optional[str]


def own_samples(corpus) -> list[Sample]:
    groups = {name: getattr(corpus, attr) for name, attr in OWN_GROUPS.items()}
    groups.update({f"issue 39: {name}": shapes for name, shapes in corpus.ISSUE_39_FAMILIES.items()})
    samples = [Sample(family, p.values[0], p.values[1]) for family, shapes in groups.items() for p in shapes]
    return samples + [Sample("near misses", p.values[0], None) for p in corpus.NEAR_MISSES]


def heldout_samples() -> list[Sample]:
    samples = []
    for path in sorted(HELDOUT.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            family = "near misses" if record.get("secret") is None else record["family"]
            samples.append(Sample(family, record["text"], record.get("secret")))
    return samples


def wrong(sample: Sample, output: str) -> bool:
    """A secret still shown (or 8 of its characters in a row), or a near miss changed."""
    if sample.secret is None:
        return output != sample.text
    secret = sample.secret
    return any(secret[i : i + LEAK_RUN] in output for i in range(max(len(secret) - LEAK_RUN + 1, 1)))


def per_family(redactors: dict[str, Callable[[str], str]], samples: list[Sample]) -> None:
    """One line per family: its size, then each redactor's count of leaks (near misses: of changes)."""
    families = list(dict.fromkeys(s.family for s in samples))
    families = [f for f in families if f != "near misses"] + ["all secrets", "near misses"]
    print(f"  {'family':<48} {'n':>4}  " + "  ".join(f"{name:>22}" for name in redactors))
    for family in families:
        chosen = [s for s in samples if s.family == family or (family == "all secrets" and s.secret is not None)]
        cells = []
        for redactor in redactors.values():
            bad = sum(wrong(s, redactor(s.text)) for s in chosen)
            cells.append(f"{bad:>4} ({bad / len(chosen):6.1%})".rjust(22))
        print(f"  {family:<48} {len(chosen):>4}  " + "  ".join(cells))


RUNS = int(os.environ.get("BENCH_RUNS", "9"))

# Run by detect-secrets' interpreter: each text's findings, scanned three ways (its ad hoc `scan_line`,
# which searches eagerly; `scan_file` as a .txt file; as a .yaml file, where keywords need no quotes),
# with all its plugins and with all but the two entropy ones.
DS_FINDINGS = """
import json, os, sys, tempfile
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.core.scan import scan_file, scan_line
from detect_secrets.settings import transient_settings
names = [cls.__name__ for cls in get_mapping_from_secret_type_to_class().values()]
plugins = {"all plugins": names, "no entropy": [n for n in names if "HighEntropy" not in n]}
texts = json.load(sys.stdin)
folder = tempfile.mkdtemp()
def in_file(text, suffix):
    path = os.path.join(folder, "notes" + suffix)
    with open(path, "w") as f:
        f.write(text)
    return [s.secret_value for s in scan_file(path) if s.secret_value]
ways = {
    "scan_line": lambda t: [s.secret_value for line in t.split("\\n") for s in scan_line(line) if s.secret_value],
    "scan_file .txt": lambda t: in_file(t, ".txt"),
    "scan_file .yaml": lambda t: in_file(t, ".yaml"),
}
out = {}
for way, scan in ways.items():
    for name, used in plugins.items():
        with transient_settings({"plugins_used": [{"name": n} for n in used]}):
            out[f"{way}, {name}"] = [scan(t) for t in texts]
json.dump(out, sys.stdout)
"""

# Run in a fresh process: import time, first call, warm call on the text read from stdin (ms). `json`
# and `re` are imported before the clock starts: every hook has them already.
OURS_TIMES = """
import json, re, sys, time
sys.path.insert(0, sys.argv[1])
text = sys.stdin.read()
t0 = time.perf_counter()
from blackboard import redact as redaction
from blackboard.redact import redact
t1 = time.perf_counter()
if sys.argv[2:] == ["without markers"]:
    for name in ("TOKENS", "VALUES", "NAMED_VALUES"):
        setattr(redaction, name, [("", pattern) for _, pattern in getattr(redaction, name)])
    redaction.SECRET_WORDS = ("",)
redact(text)
t2 = time.perf_counter()
redact(text)
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""
DS_TIMES = """
import json, re, sys, time
text = sys.stdin.read()
t0 = time.perf_counter()
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings
settings = default_settings()
settings.__enter__()
t1 = time.perf_counter()
def scan(text):
    return [s for line in text.split("\\n") for s in scan_line(line)]
scan(text)
t2 = time.perf_counter()
scan(text)
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""


def load_corpus():
    """The corpus test module, loaded as the sync test loads it."""
    spec = importlib.util.spec_from_file_location("corpus", REPO / "tests" / "unit" / "test_redact_corpus.py")
    assert spec is not None and spec.loader is not None
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    return corpus


def score(redactor: Callable[[str], str], shapes: list[tuple[str, str, str]], near_misses: list[str]) -> dict[str, int]:
    redacted = [redactor(text) for text, _, _ in shapes]
    return {
        "secret gone": sum(secret not in out for out, (_, secret, _) in zip(redacted, shapes)),
        "secret gone, context kept": sum(
            secret not in out and kept in out for out, (_, secret, kept) in zip(redacted, shapes)
        ),
        "near misses changed": sum(redactor(text) != text for text in near_misses),
    }


def replace_findings(findings: dict[str, list[str]]) -> Callable[[str], str]:
    def redactor(text: str) -> str:
        for value in sorted(findings.get(text, []), key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    return redactor


def median_times(python: str, script: str, text: str, *args: str) -> list[float]:
    """Import, first call and warm call (ms): medians of ``RUNS`` fresh processes."""
    runs = [run(python, script, text, *args) for _ in range(RUNS)]
    return [statistics.median(times[i] for times in runs) for i in range(3)]


def run(python: str, script: str, stdin: str, *args: str) -> list[float]:
    done = subprocess.run([python, "-c", script, *args], input=stdin, capture_output=True, text=True, check=True)
    return [float(x) for x in done.stdout.split()]


def detect_secrets_findings(texts: list[str]) -> dict[str, list[list[str]]]:
    done = subprocess.run(
        [DS_PYTHON, "-c", DS_FINDINGS], input=json.dumps(texts), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def per_family_figures(name: str, samples: list[Sample]) -> None:
    """``samples`` per family through ours and detect-secrets' file scan (all plugins, and without entropy)."""
    texts = list(dict.fromkeys(s.text for s in samples))
    found = detect_secrets_findings(texts)
    redactors = {"blackboard.redact": redact}
    for config in ("scan_file .yaml, all plugins", "scan_file .yaml, no entropy", "scan_line, no entropy"):
        redactors[f"d-s {config.replace('scan_file ', '').replace(', ', ' ')}"] = replace_findings(
            dict(zip(texts, found[config]))
        )
    print(f"{name}: leaked secrets (near misses: changed), per family")
    per_family(redactors, samples)


def main() -> None:
    corpus = load_corpus()
    per_family_figures("own corpus", own_samples(corpus))
    if any(HELDOUT.glob("*.jsonl")):
        per_family_figures(f"held-out corpus ({HELDOUT.name})", heldout_samples())
    shapes = [tuple(p.values) for p in corpus.SHAPES]
    near = [p.values[0] for p in corpus.NEAR_MISSES]
    texts = [s[0] for s in shapes] + near
    found = detect_secrets_findings(texts)

    print(f"corpus: {len(shapes)} secret shapes, {len(near)} near misses")
    rows = {"blackboard.redact": score(redact, shapes, near)}
    for config, per_text in found.items():
        by_text = dict(zip(texts, per_text))
        row = score(replace_findings(by_text), shapes, near)
        row["flagged"] = sum(bool(by_text[text]) for text, _, _ in shapes)
        row["near misses flagged"] = sum(bool(by_text[text]) for text in near)
        rows[f"detect-secrets ({config})"] = row
    for name, row in rows.items():
        print(f"  {name:<32} " + ", ".join(f"{k} {v}" for k, v in row.items()))

    prose = "".join(p.read_text() for p in sorted((REPO / "docs").rglob("*.md")) + sorted((REPO / "lib").rglob("*.py")))
    for size in (2048, 32768):
        text = prose[:size]
        ours = median_times(sys.executable, OURS_TIMES, text, str(REPO / "lib"))
        unmarked = median_times(sys.executable, OURS_TIMES, text, str(REPO / "lib"), "without markers")
        theirs = median_times(DS_PYTHON, DS_TIMES, text)
        timed = (("blackboard.redact", ours), ("  without markers", unmarked), ("detect-secrets", theirs))
        for name, (imp, first, warm) in timed:
            times = f"import {imp:6.1f} ms, first call {first:6.1f} ms, warm {warm:6.1f} ms"
            print(f"  {size // 1024:>2} KiB {name:<18} {times}")


if __name__ == "__main__":
    main()
