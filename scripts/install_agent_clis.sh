#!/usr/bin/env bash
# Install the pinned real agent CLIs that tests/e2e_real_cli drives (Claude Code, Codex CLI).
#
#   scripts/install_agent_clis.sh            # install (or reuse) into the cache, print the bin dir
#
# The versions are the ones ../shared/agent-cli/README.md captured. They go into a private npm
# prefix (never -g), cached under ${PROMPT_RUNNER_AGENT_CLI_CACHE:-~/.cache/prompt-runner-agent-clis},
# so a rerun with the right versions already there does nothing. The last line printed is
# "agent CLIs: <bin dir>". Exit status 0 = both binaries run and report the pinned versions.
# npm prints an EBADENGINE warning for claude-code 2.1.332 on node < 22; the binary is native
# (platform optionalDependency), so node's version does not matter.
set -euo pipefail

CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
CACHE="${PROMPT_RUNNER_AGENT_CLI_CACHE:-${HOME}/.cache/prompt-runner-agent-clis}"
BIN="$CACHE/node_modules/.bin"

installed() {
  [ -x "$BIN/claude" ] && [ -x "$BIN/codex" ] || return 1
  "$BIN/claude" --version 2>/dev/null | grep -q "^${CLAUDE_VERSION} " || return 1
  "$BIN/codex" --version 2>/dev/null | grep -q " ${CODEX_VERSION}\$" || return 1
}

if installed; then
  echo "agent CLIs: $BIN (cached: claude $CLAUDE_VERSION, codex $CODEX_VERSION)"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install_agent_clis: npm is not on PATH; install Node.js (>= 18) and npm" >&2
  exit 1
fi
mkdir -p "$CACHE"
echo "installing @anthropic-ai/claude-code@$CLAUDE_VERSION and @openai/codex@$CODEX_VERSION into $CACHE ..."
start=$(date +%s)
npm install --prefix "$CACHE" --no-audit --no-fund --no-save --loglevel=error \
  --fetch-retries=2 --fetch-timeout=120000 \
  "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION"
if ! installed; then
  echo "install_agent_clis: npm finished but the binaries in $BIN do not report the pinned versions" >&2
  exit 1
fi
echo "installed in $(( $(date +%s) - start )) s"
echo "agent CLIs: $BIN"
