"""Clause families; every module here registers its clause names on import."""
