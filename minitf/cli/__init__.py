"""The ``minitf`` command.  Each sub-command lives in its own module, which provides
``configure(parser)`` (add its arguments) and ``run(args) -> int`` (do the work); this
file only wires them together, importing a module when its command is used."""
from __future__ import annotations

import argparse
import importlib
import sys

# command name -> (module, one-line help)
COMMANDS = {
    "train": ("minitf.cli.train", "train a small model on a toy task, or pretrain one by denoising "
                                       "(--objective); print teacher-forced vs free-running results"),
    "finetune": ("minitf.cli.finetune", "fine-tune a pretrained checkpoint on a supervised task; print "
                                             "teacher-forced vs free-running results"),
    "bench": ("minitf.cli.bench", "time a training step (or decoding, with --decode) in NumPy and, if installed, PyTorch"),
    "figures": ("minitf.cli.figures", "regenerate the course figures and the figure key"),
    "generate": ("minitf.cli.generate", "decode from a checkpoint: greedy, sampling or beam search"),
    "lessons": ("minitf.cli.lessons", "list the lessons; run them, copy them out, or publish them: "
                                        "a website (--site), offline slides, HTML"),
    "homework": ("minitf.cli.homework", "hand out a fresh homework template"),
    "grade": ("minitf.cli.grade", "grade a homework submission with pytest"),
}


class HelpWithDefaults(argparse.HelpFormatter):
    """Every flag's help ends with its default, unless the help already states it (or there is
    none to state: a switch, or a value computed when it is left out)."""

    def _get_help_string(self, action):
        help_ = action.help or ""
        if "default" in help_ or any(action.default is v for v in (None, False, argparse.SUPPRESS)) \
                or not action.option_strings:
            return help_
        return f"{help_} (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    from minitf import __version__

    parser = argparse.ArgumentParser(
        prog="minitf", description="minitf: a from-scratch NumPy framework for encoder-decoder transformers, "
                                   "for teaching (every backward written by hand)")
    parser.add_argument("--version", action="version", version=f"minitf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_, formatter_class=HelpWithDefaults)
        p.set_defaults(_module=module)
        importlib.import_module(module).configure(p)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

