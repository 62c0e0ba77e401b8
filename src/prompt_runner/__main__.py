"""``python -m prompt_runner``."""

import sys

from prompt_runner.cli.main import leave, main

sys.exit(leave(main()))
