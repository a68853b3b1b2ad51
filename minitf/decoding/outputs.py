"""What every decoder returns: hypotheses, the trace of each step, and the trace as text.

Shapes: R outputs per input (1 for greedy search, ``num_return_sequences`` otherwise);
rows ``b*R .. b*R+R-1`` of a :class:`GenerationOutput` belong to input b.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..checks import check_int
from ..data import CharTokenizer

__all__ = ["Hypothesis", "Candidate", "TraceStep", "GenerationOutput", "format_trace"]


@dataclass
class Hypothesis:
    """One output sequence."""
    tokens: tuple  # generated ids: no start token; ends with <eos> when finished
    log_prob: float  # sum of the model's log-probabilities of those tokens
    score: float  # what the decoder ranked by (beam search: length-normalised; else = log_prob)
    finished: bool  # ended with <eos> (else stopped by max_new_tokens)

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass
class Candidate:
    """One extension considered at a step: a beam (row) followed by a token."""
    beam: int  # which beam (row of this example) it extends
    token: int
    log_prob: float  # log-probability of the token in the distribution the decoder chose from
    score: float  # cumulative sum of the model's log-probs of the extended sequence
    status: str  # "kept" (continues), "finished" (ended with <eos>), or "dropped"


@dataclass
class TraceStep:
    """What one decoding step did for one example."""
    step: int  # t: the index of the token being chosen (0 = the first generated token)
    example: int  # b: which input of the batch
    beams: list  # the live beams (rows) before this step: tuples of generated ids
    beam_scores: list  # their cumulative log-probs
    beam_rows: list  # which row (0..G-1) each listed beam occupies
    candidates: list  # Candidate objects, best first
    finished: list = field(default_factory=list)  # beam search: the finished Hypothesis pool after this step


@dataclass
class GenerationOutput:
    """What every decoder returns.  R = outputs per input; rows ``b*R .. b*R+R-1`` belong to input b."""
    sequences: np.ndarray  # (B*R, T_out) int64 generated ids, no start token; pad after the end
    lengths: np.ndarray  # (B*R,) generated tokens per row, <eos> included
    log_probs: np.ndarray  # (B*R,) sum of the model's log-probs of each row's tokens
    scores: np.ndarray  # (B*R,) what the decoder ranks by (beam search: length-normalised)
    finished: np.ndarray  # (B*R,) True where the row ended with <eos>
    num_return: int  # R
    trace: list | None = None  # TraceStep objects, in step order, when asked for

    @property
    def batch_size(self) -> int:
        return self.sequences.shape[0] // self.num_return

    def hypotheses(self, example: int) -> list:
        """The R outputs for input ``example``, best first, as :class:`Hypothesis` objects."""
        B, R = self.batch_size, self.num_return
        check_int("example", example, 0, B - 1)
        out = []
        for r in range(example * R, example * R + R):
            if not np.isfinite(self.scores[r]):  # a slot no hypothesis filled
                continue
            n = int(self.lengths[r])
            out.append(Hypothesis(tuple(int(i) for i in self.sequences[r, :n]), float(self.log_probs[r]),
                                  float(self.scores[r]), bool(self.finished[r])))
        return out


def format_trace(trace: list, tokenizer: CharTokenizer | None = None, max_candidates: int | None = None) -> str:
    """A plain-text rendering of a trace, one block per (step, example)."""
    def tok(i):
        return tokenizer.id_to_token(i) if tokenizer is not None else str(i)

    def seq(tokens):
        return "".join(tok(i) for i in tokens) if tokenizer is not None else " ".join(tok(i) for i in tokens)

    lines = []
    for s in trace:
        lines.append(f"step {s.step}  example {s.example}")
        for row, tokens, score in zip(s.beam_rows, s.beams, s.beam_scores):
            lines.append(f"  beam {row}: {seq(tokens)!r:<24} log-prob {score:9.4f}")
        cands = s.candidates if max_candidates is None else s.candidates[:max_candidates]
        for cnd in cands:
            lines.append(f"    beam {cnd.beam} + {tok(cnd.token)!r:<8} log p {cnd.log_prob:9.4f}  "
                         f"sum {cnd.score:9.4f}  {cnd.status}")
        for h in s.finished:
            lines.append(f"  finished: {seq(h.tokens)!r:<22} score {h.score:9.4f}  (log-prob {h.log_prob:.4f})")
    return "\n".join(lines)
