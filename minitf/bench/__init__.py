"""Benchmarks and process settings: tooling around the course, not model code.

- :mod:`minitf.bench.training`: ``minitf bench``, a training step in NumPy next to PyTorch eager.
- :mod:`minitf.bench.decode`: ``minitf bench --decode``, cached against uncached greedy decoding,
  and one cached decoder step against a KV-cached torch-eager step of the same model.
- :mod:`minitf.bench.rnn`: ``minitf bench --rnn``, an LSTM encoder-decoder's training step next
  to ``torch.nn.LSTM``, with the floor its matrix products alone set.
- :mod:`minitf.bench.profile`: ``minitf bench --profile``, where a training step's time goes.
- :mod:`minitf.bench.blas`: which BLAS library, kernel and thread count each side ran.
- :mod:`minitf.bench.process`: the machine-load note (the allocator setting is :mod:`minitf.process`, training's)
  the benchmarks print.

Importing this package loads none of them (and so neither NumPy's model code nor PyTorch).
"""
