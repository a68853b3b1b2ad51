"""Task 6.4: the FLOPs from Lesson 6's own formulas (the lesson package), reached by a computed
name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def forward_flops(config, B, S, T):
    return _lib("course.l06_encoder_decoder").forward_flops(_lib("config").ModelConfig(**config), B, S, T)


def training_flops(config, B, S, T):
    return _lib("course.l06_encoder_decoder").backward_flops(_lib("config").ModelConfig(**config), B, S, T)
