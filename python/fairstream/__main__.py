"""``python -m fairstream``: the same as the ``fairstream`` command."""

import sys

from .cli import main

sys.exit(main())
