"""Rendering: terminal tables and progress, JSON documents."""
