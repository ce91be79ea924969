"""`python -m opsgraph.cli`: the same as the `opsgraph` console script."""

import sys

from opsgraph.cli import main

sys.exit(main())
