"""iobench: find out what your storage really delivers."""

__version__ = "0.1.0"
