"""minitf: encoder-decoder transformers in NumPy, every backward pass written by hand."""
__version__ = "0.1.0"
