"""``python -m zerochess.analysis [flags]``: the same as ``zerochess analysis [flags]``."""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    sys.exit(main(["analysis", *sys.argv[1:]], process=True))
