"""`python -m mpdemo ...`"""

import sys

from .cli import main

sys.exit(main())
