"""Rendering: terminal tables and progress, the info, doctor and comparison views, and
the HTML and Markdown reports."""
