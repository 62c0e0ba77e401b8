#!/usr/bin/env bash
# Debian's chromium for the dashboard's browser tests (Playwright drives it
# through launch(executable_path=...); Playwright's own download is not
# reachable from CI). Skipped quietly when it is already there.
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "not root and no sudo: cannot install chromium"; exit 1; }
  SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -qq chromium >/dev/null 2>&1 \
  || { $SUDO apt-get update -qq >/dev/null 2>&1 && $SUDO apt-get install -y -qq chromium >/dev/null 2>&1; } \
  || { echo "apt-get could not install chromium"; exit 1; }
command -v chromium
