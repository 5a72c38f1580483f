"""Start a blackboard hook: ``launch.py EVENT`` with Claude Code's JSON on stdin. Always exits 0.

hooks/run starts the plugin's environment with ``-S``: ``site`` costs a few milliseconds and
all the hook needs from it is the environment's site-packages, added here. On SessionStart an
environment built from other requirements exits with ``environment.STALE`` before reading
stdin, so hooks/run can rebuild it and start the hook again.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

try:
    from blackboard import environment

    venv = environment.current_venv()
    if venv and sys.flags.no_site:
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        sys.path.append(os.path.join(venv, "lib", version, "site-packages"))
    if venv and sys.argv[1:2] == ["session-start"] and not environment.ready(venv):
        sys.exit(environment.STALE)
    from blackboard.hook import main
except Exception:  # noqa: BLE001 - even a broken install must not break the session
    sys.stderr.write("blackboard: hook could not load its library; reinstall the plugin\n")
    sys.exit(0)

sys.exit(main())
