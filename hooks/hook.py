"""Run one blackboard hook: ``hook.py EVENT`` with Claude Code's JSON on stdin. Always exits 0."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

try:
    from blackboard.hook import main
except BaseException:  # noqa: BLE001 - even a broken install must not break the session
    sys.stderr.write("blackboard: hook could not load its library; reinstall the plugin\n")
    sys.exit(0)

sys.exit(main())
