"""`python -m voicedesk` runs the command line (no arguments opens the window)."""

import sys

from voicedesk.cli import main

if __name__ == "__main__":
    sys.exit(main())
