"""``python -m prompt_runner``."""

import sys

from prompt_runner.cli.main import arm_quick_exit, leave, main

arm_quick_exit()
sys.exit(leave(main()))
