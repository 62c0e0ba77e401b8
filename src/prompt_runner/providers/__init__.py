"""Providers: the Provider protocol, canonical events and one module per agent CLI."""
