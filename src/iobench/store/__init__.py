"""The results database: the only package that holds SQL."""

from iobench.store.repository import ResultRecord, RunRecord, Store, default_db_path

__all__ = ["ResultRecord", "RunRecord", "Store", "default_db_path"]
