"""Everything that knows fio: job files, running it, and reading its output."""
