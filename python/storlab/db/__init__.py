"""Databases storlab benchmarks: clusters it runs itself and servers it connects to."""
