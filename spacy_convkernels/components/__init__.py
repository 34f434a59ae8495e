"""spaCy pipeline components: thin adapters between Docs and the library."""
