"""python3 -m mkfixture (from tools/): the same as python3 tools/mkfixture.py."""

import sys

from .cli import main

sys.exit(main())
