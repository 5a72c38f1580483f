# Sourced by hooks/run and bin/blackboard (bash). Expects $plugin_root; sets $venv, and
# $python to the plugin's environment when it is built from the current requirements.
venv="${BLACKBOARD_VENV:-${CLAUDE_PLUGIN_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/blackboard}/venv}"
requirements="$plugin_root/requirements.txt"
python=""
if [ -x "$venv/bin/python" ] && [ -f "$venv/.blackboard-requirements" ] &&
  [ "$(<"$venv/.blackboard-requirements")" = "$(<"$requirements")" ]; then
  python="$venv/bin/python"
fi

# Build the environment (under a lock, once); on failure fall back to the machine's python3.
build_venv() {
  local system
  system="$(command -v python3 || command -v python)"
  [ -n "$system" ] || return 1
  if "$system" "$plugin_root/hooks/bootstrap.py" "$venv" "$requirements" </dev/null >/dev/null; then
    python="$venv/bin/python"
  else
    python="$system"
  fi
}
