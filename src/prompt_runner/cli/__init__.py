"""The command line: thin handlers over the library API."""
