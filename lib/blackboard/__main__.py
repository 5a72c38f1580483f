"""``python lib/blackboard/__main__.py ARGS`` (what bin/blackboard runs) or ``python -m blackboard``."""

import os
import sys

if not __package__:
    # Run as a script: import the package from lib/, not the modules beside this file.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from blackboard import environment  # noqa: E402

venv = environment.current_venv()
if venv and not environment.ready(venv):  # before reading any input, so bin/blackboard can rebuild and rerun
    sys.exit(environment.STALE)

from blackboard.cli import main  # noqa: E402

main()
