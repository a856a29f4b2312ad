"""``python -m roofline.tui.cli``: the same as the ``roofline`` command."""

import sys

from roofline.tui.cli.main import main

sys.exit(main())
