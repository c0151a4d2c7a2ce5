"""``python -m tilelang``: the ``tilelang`` command (`tilelang.cli`)."""

import sys

from tilelang.cli import main

if __name__ == "__main__":
    sys.exit(main())
