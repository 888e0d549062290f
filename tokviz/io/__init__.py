"""Loaders and writers for tokenizer files (local paths or bytes only, never a URL)."""
