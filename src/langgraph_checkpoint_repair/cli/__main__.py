"""`python -m langgraph_checkpoint_repair.cli` is `langgraph-repair`."""

import sys

from . import main

sys.exit(main())
