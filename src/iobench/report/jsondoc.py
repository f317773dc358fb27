"""Moved to iobench.documents.printed; kept for cli.py and cli_curves.py until they import it
from there (the lead removes this module at merge)."""

from iobench.documents.printed import run_document as run_document
from iobench.documents.printed import runs_document as runs_document
