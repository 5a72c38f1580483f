"""Start a blackboard hook: ``launch.py EVENT`` with Claude Code's JSON on stdin. Always exits 0.

hooks/run starts it with the plugin environment's python. On SessionStart an environment
built from other requirements is rebuilt first, before stdin is read, and the hook starts
again in it; if that fails, the hook goes on in the environment it has.
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(os.path.dirname(here), "lib"))  # after the standard library: its imports look here last

try:
    from blackboard import environment

    venv = environment.current_venv()
    if venv and sys.argv[1:2] == ["session-start"] and not environment.ready(venv):
        sys.path.insert(0, here)
        import bootstrap

        if bootstrap.main(venv, environment.REQUIREMENTS) == 0:
            python = os.path.join(venv, "bin", "python")
            os.execv(python, [python, "-I", os.path.abspath(__file__), *sys.argv[1:]])
    from blackboard.hook import main
except Exception:  # noqa: BLE001 - even a broken install must not break the session
    sys.stderr.write("blackboard: hook could not load its library; reinstall the plugin\n")
    sys.exit(0)

sys.exit(main())
