# Sourced by hooks/run (POSIX sh) and bin/blackboard (bash). Expects $plugin_root; sets $venv
# and $requirements, and defines build_venv.
venv="${BLACKBOARD_VENV:-${CLAUDE_PLUGIN_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/blackboard}/venv}"
requirements="$plugin_root/requirements.txt"
python=""
build_failed=""

# Build the environment (under a lock, once) and set $python to it. On failure fall back to
# the machine's python3 and set $build_failed: bootstrap.py has already said so on stderr.
build_venv() {
  python="$(command -v python3 || command -v python)"
  [ -n "$python" ] || return 1
  if "$python" "$plugin_root/hooks/bootstrap.py" "$venv" "$requirements" </dev/null >/dev/null; then
    python="$venv/bin/python"
  else
    build_failed=1
  fi
}
