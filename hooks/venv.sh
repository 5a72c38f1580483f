# Sourced by hooks/run and bin/blackboard (bash). Expects $plugin_root; sets $venv, and
# $python to the plugin's environment when it is built from the current requirements.
venv="${BLACKBOARD_VENV:-${CLAUDE_PLUGIN_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/blackboard}/venv}"
requirements="$plugin_root/requirements.txt"
python=""
if [ -x "$venv/bin/python" ] && [ -f "$venv/.blackboard-requirements" ] &&
  [ "$(<"$venv/.blackboard-requirements")" = "$(<"$requirements")" ]; then
  python="$venv/bin/python"
fi

# Build the environment (under a lock, once). On failure fall back to the machine's python3
# and set $build_failed: bootstrap.py has already said so in its one line on stderr.
build_venv() {
  local system
  system="$(command -v python3 || command -v python)"
  [ -n "$system" ] || return 1
  if "$system" "$plugin_root/hooks/bootstrap.py" "$venv" "$requirements" </dev/null >/dev/null; then
    python="$venv/bin/python"
  else
    python="$system"
    build_failed=1
  fi
}

# Without time to build: an older environment of ours still beats the machine's python3.
fallback_python() {
  if [ -x "$venv/bin/python" ] && [ -f "$venv/.blackboard-requirements" ]; then
    python="$venv/bin/python"
  else
    python="$(command -v python3 || command -v python)"
  fi
}
