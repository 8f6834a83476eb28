"""Measures, tables and report sections of memory streams."""
