"""Benchmarks and process settings: tooling around the course, not model code.

- :mod:`minitf.bench.training`: ``minitf bench``, a training step in NumPy next to PyTorch eager.
- :mod:`minitf.bench.decode`: ``minitf bench --decode``, cached against uncached greedy decoding.
- :mod:`minitf.bench.process`: the allocator setting training uses, and the machine-load note
  both benchmarks print.

Importing this package loads none of them (and so neither NumPy's model code nor PyTorch).
"""
