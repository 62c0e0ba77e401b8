"""``python -m prompt_runner``."""

import sys

from prompt_runner.cli.main import main

sys.exit(main())
