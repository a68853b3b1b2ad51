"""Every task: an endless loop at module level (the import never finishes)."""
while True:
    pass
