"""``python -m zerochess.cli ...`` = ``zerochess ...``."""

import sys

from zerochess.cli import main

sys.exit(main())
