"""Run one blackboard hook: ``hook.py EVENT`` with Claude Code's JSON on stdin. Always exits 0.

hooks/run starts the plugin's environment with ``-S``: ``site`` costs a few milliseconds and
all the hook needs from it is the environment's site-packages, added here. On SessionStart an
environment built from other requirements exits 3 before reading stdin, so hooks/run can
rebuild it and run the hook again.
"""

import os
import sys

STALE = 3
here = os.path.dirname(os.path.abspath(__file__))
plugin_root = os.path.dirname(here)
venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
sys.path.insert(0, os.path.join(plugin_root, "lib"))

if os.path.exists(os.path.join(venv, ".blackboard-requirements")):  # the plugin's environment
    if sys.flags.no_site:
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        sys.path.append(os.path.join(venv, "lib", version, "site-packages"))
    if sys.argv[1:2] == ["session-start"]:
        sys.path.insert(0, here)
        from bootstrap import ready

        if not ready(venv, os.path.join(plugin_root, "requirements.txt")):
            sys.exit(STALE)

try:
    from blackboard.hook import main
except BaseException:  # noqa: BLE001 - even a broken install must not break the session
    sys.stderr.write("blackboard: hook could not load its library; reinstall the plugin\n")
    sys.exit(0)

sys.exit(main())
