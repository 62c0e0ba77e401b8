"""Renderers and sinks: terminal text, session transcripts, JSONL event logs."""
