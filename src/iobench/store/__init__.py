"""The results database: the only package that holds SQL."""

from iobench.store.repository import Store, default_db_path

__all__ = ["Store", "default_db_path"]
