# Sourced by hooks/run (POSIX sh) and bin/blackboard (bash). Expects $plugin_root; sets $venv
# (empty when there is nowhere of our own to put it) and $requirements, and defines build_venv.
if [ -n "$BLACKBOARD_VENV" ]; then
  venv="$BLACKBOARD_VENV"
elif [ -n "$CLAUDE_PLUGIN_DATA" ]; then
  venv="$CLAUDE_PLUGIN_DATA/venv"
elif [ -n "$XDG_DATA_HOME" ]; then
  venv="$XDG_DATA_HOME/blackboard/venv"
elif [ -n "$HOME" ]; then
  venv="$HOME/.local/share/blackboard/venv"
else
  venv="" # no HOME: never build under /.local; the machine's python3 runs the hooks
fi
requirements="$plugin_root/requirements.txt"
python=""
build_failed=""

# Build the environment (under a lock, once) and set $python to it. On failure fall back to
# the machine's python3 and set $build_failed: bootstrap.py has already said so on stderr.
build_venv() {
  python="$(command -v python3 || command -v python)"
  [ -n "$python" ] || return 1
  if [ -z "$venv" ]; then
    build_failed=1
  elif "$python" "$plugin_root/hooks/bootstrap.py" "$venv" "$requirements" </dev/null >/dev/null; then
    python="$venv/bin/python"
  else
    build_failed=1
  fi
}
