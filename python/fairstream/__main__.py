"""``python -m fairstream``: the same as the ``fairstream`` command."""

from .cli import entry

entry()
