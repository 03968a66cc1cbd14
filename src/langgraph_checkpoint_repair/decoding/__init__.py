"""Stored bytes, type by type: naming the types a blob holds (`names`), deciding
whether each can be rebuilt here without running it (`finders`), and building only
trusted ones (`strict`). Imports nothing of ours but `compatibility`."""
