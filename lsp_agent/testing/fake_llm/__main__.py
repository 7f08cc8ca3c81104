"""``python -m lsp_agent.testing.fake_llm``."""

import sys

from lsp_agent.testing.fake_llm.cli import main

sys.exit(main())
