"""Authoring model: front matter, manifest, prompts, profiles, templates."""
