"""``python -m zerochess.uci``: the UCI engine (same as ``zerochess uci``)."""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    sys.exit(main(["uci", *sys.argv[1:]], process=True))
