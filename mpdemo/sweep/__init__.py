"""The size sweep: where mixed precision pays on this machine."""
