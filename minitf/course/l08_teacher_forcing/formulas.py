"""Lesson 8's formulas: the shifted decoder inputs, the masked cross-entropy and its gradient
p_hat - y (with label smoothing, and over a padded batch), the encoder's gradient as a sum over
the decoder blocks, error compounding, AdamW and gradient clipping."""
from __future__ import annotations

import numpy as np

from ...data import IGNORE_INDEX, make_batch, shift_right
from ...loss import cross_entropy
from ...models import EncoderDecoder
from ...optim import AdamW, clip_grad_norm, global_grad_norm
from ..kit.formulas import compare, finite_differences, formula, lesson_intro, random_ids, softmax_rows, tiny_config

lesson_intro("8", """
Training (`minitf/data`, `minitf/loss.py`, `minitf/models/encoder_decoder.py`, `minitf/optim.py`): the
labels y carry −100 (`IGNORE_INDEX`) on padding, R is the set of real target positions and m = |R|.
""")

PAD, BOS = 0, 1


@formula("shift-right", lesson="8", section=2, title="Decoder inputs: the target shifted right",
         latex=r"""
\tilde y_1 = \langle\mathrm{bos}\rangle, \qquad \tilde y_t = y_{t-1}\ \ (t = 2, \dots, T),
\qquad y_{t-1} = -100 \ \Rightarrow\ \tilde y_t = \langle\mathrm{pad}\rangle""",
         computes="minitf.data.shift_right",
         note="Position t is fed y_{t−1} and trained to output y_t; the last label (`<eos>` or padding) is "
              "never fed. As Hugging Face's `shift_tokens_right`; T5 uses its pad token as the start.")
def check_shift_right(rng):
    y = rng.integers(3, 20, size=(3, 6))
    y[1, 4:], y[2, 2:] = IGNORE_INDEX, IGNORE_INDEX
    shifted = np.concatenate([np.full((3, 1), BOS), y[:, :-1]], axis=1)
    shifted[shifted == IGNORE_INDEX] = PAD
    return [compare("ỹ", shifted, shift_right(y, BOS, PAD), tol=0)]


def _logits_and_labels(rng, B=2, T=5, V=7):
    z = rng.standard_normal((B, T, V)) * 2
    y = rng.integers(0, V, size=(B, T))
    y[0, 3:], y[1, 4:] = IGNORE_INDEX, IGNORE_INDEX  # padding: 3 + 4 = 7 real positions
    return z, y


def _ce(z, y, eps=0.0):
    """The formula: mean over real positions of -sum_v q_v log p_v, q = (1 - eps) onehot(y) + eps / V."""
    V = z.shape[-1]
    real = y != IGNORE_INDEX
    logp = np.log(softmax_rows(z))
    q = (1 - eps) * np.eye(V)[np.where(real, y, 0)] + eps / V
    return -np.sum((q * logp).sum(-1) * real) / real.sum(), q, real


@formula("cross-entropy", lesson="8", section=3, title="The loss over the real target tokens",
         latex=r"""
L = -\frac{1}{m} \sum_{t \in R} \log \operatorname{softmax}(z_t)[y_t],
\qquad R = \{t : y_t \ne -100\}, \quad m = |R|; \qquad
L_{\text{batch}} = \frac{\sum_i m_i L_i}{\sum_i m_i}""",
         computes="minitf.loss.cross_entropy",
         note="The mean divides by the number of real target tokens, not by the padded length B·T: a padded "
              "batch's loss is exactly the real-token-weighted mean of its examples' losses, each computed "
              "without padding (the last formula). Lesson 1 §5 uses the same masked loss for the RNN.")
def check_cross_entropy(rng):
    z, y = _logits_and_labels(rng)
    L, _, real = _ce(z, y)
    per_example = [(_ce(z[i:i + 1, :m], y[i:i + 1, :m])[0], m) for i, m in enumerate(real.sum(1))]
    L_batch = sum(m * Li for Li, m in per_example) / sum(m for _, m in per_example)
    return [compare("L", L, cross_entropy(z, y)[0]), compare("L_batch from the unpadded examples", L_batch,
                                                             cross_entropy(z, y)[0])]


@formula("cross-entropy-gradient", lesson="8", section=3, title="The logits' gradient: p̂ − y",
         latex=r"""
\frac{\partial L}{\partial z_t} = \begin{cases} \dfrac{\hat p_t - \operatorname{onehot}(y_t)}{m}
& t \in R \\[4pt] 0 & t \notin R \end{cases},
\qquad \hat p_t = \operatorname{softmax}(z_t)""",
         computes="minitf.loss.cross_entropy",
         note="The whole backward starts here; padding positions get exactly zero gradient.")
def check_ce_gradient(rng):
    z, y = _logits_and_labels(rng)
    _, q, real = _ce(z, y)
    grad = (softmax_rows(z) - q) / real.sum() * real[..., None]
    return [compare("∂L/∂z", grad, cross_entropy(z, y)[1]),
            finite_differences("∂L/∂z", grad, lambda: _ce(z, y)[0], z)]


@formula("label-smoothing", lesson="8", section=3, title="Label smoothing",
         latex=r"""
q_t = (1 - \varepsilon)\, \operatorname{onehot}(y_t) + \frac{\varepsilon}{V}, \qquad
L = -\frac{1}{m} \sum_{t \in R} \sum_{v=1}^{V} q_{t,v} \log \hat p_{t,v}, \qquad
\frac{\partial L}{\partial z_t} = \frac{\hat p_t - q_t}{m}""",
         computes="minitf.loss.cross_entropy",
         note="As `torch.nn.functional.cross_entropy(label_smoothing=ε)`; ε = 0 is the plain loss.")
def check_label_smoothing(rng):
    z, y = _logits_and_labels(rng)
    eps = 0.1
    L, q, real = _ce(z, y, eps)
    mL, mgrad = cross_entropy(z, y, label_smoothing=eps)
    grad = (softmax_rows(z) - q) / real.sum() * real[..., None]
    return [compare("L", L, mL), compare("∂L/∂z", grad, mgrad),
            finite_differences("∂L/∂z", grad, lambda: _ce(z, y, eps)[0], z)]


@formula("encoder-gradient", lesson="8", section=4, title="The encoder's gradient: a sum over the decoder blocks",
         latex=r"""
\frac{\partial L}{\partial H_{\text{enc}}} = \sum_{l=1}^{L_{\text{dec}}} \Big( dK^{(l)}\, W_k^{(l)\top} +
dV^{(l)}\, W_v^{(l)\top} \Big)""",
         computes="minitf.models.encoder_decoder.EncoderDecoder.backward",
         note="H_enc feeds the keys and values of every decoder block's cross-attention, so every block hands "
              "back its share (Lesson 4 §5) and the shares add up: the encoder's only learning signal. The "
              "check sums minitf's shares and compares them with its total and with finite differences of "
              "the loss with respect to H_enc.")
def check_encoder_gradient(rng):
    c = tiny_config(n_decoder_layers=2)
    model = EncoderDecoder(c).eval()
    src, labels = random_ids(rng, 2, 4, c.src_vocab_size), random_ids(rng, 2, 3, c.tgt_vocab_size)
    dec_in = shift_right(labels, c.bos_id, c.pad_id)
    logits, cache = model.forward(src, dec_in)
    _, dlogits = cross_entropy(logits, labels)
    grads = model.backward(dlogits, cache)
    total = np.sum(grads.dH_enc_shares, axis=0)  # the formula: the shares summed
    H_enc, _ = model.encode(src)
    src_mask = model.source_mask(src)

    def loss():
        return cross_entropy(model.decode(dec_in, H_enc, src_mask)[0], labels)[0]

    return [compare("Σ_l share_l (minitf: dH_enc)", total, grads.dH_enc),
            finite_differences("Σ_l shares", total, loss, H_enc)]


@formula("error-compounding", lesson="8", section=5, title="Errors compound with length",
         latex=r"P(\text{a } T\text{-token output is wrong}) = 1 - (1 - \epsilon)^{T}",
         computes="minitf.course.l08_teacher_forcing.gap.error_compounding",
         note="If each token were wrong independently with probability ε (the teacher-forced per-token "
              "error), a T-token output would contain an error with this probability. Also Lesson 1 §5. The "
              "check measures ε on an untrained model and compares the predicted curve.")
def check_error_compounding(rng):
    from .gap import error_compounding  # course code, imported when the check runs

    c = tiny_config(tgt_vocab_size=11)
    model = EncoderDecoder(c).eval()
    lengths = [2, 3, 3, 5, 6]
    targets = [list(rng.integers(3, 11, size=n - 1)) + [c.eos_id] for n in lengths]
    batch = make_batch([list(rng.integers(3, 11, size=4)) for _ in lengths], targets, pad_id=c.pad_id,
                       start_id=c.bos_id)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    real = batch.labels != IGNORE_INDEX
    eps = 1 - np.sum((logits.argmax(-1) == batch.labels) & real) / real.sum()
    result = error_compounding(model, batch)
    T = np.unique(lengths)
    return [compare("T", T, result.lengths, tol=0), compare("1 - (1 - ε)^T", 1 - (1 - eps) ** T, result.predicted)]


@formula("adamw", lesson="8", section=5, title="AdamW",
         latex=r"""
\begin{aligned}
\theta &\leftarrow \theta\,(1 - \gamma\lambda) \\
m &\leftarrow \beta_1 m + (1 - \beta_1)\, g, \qquad v \leftarrow \beta_2 v + (1 - \beta_2)\, g^2 \\
\hat m &= \frac{m}{1 - \beta_1^{\,t}}, \qquad \hat v = \frac{v}{1 - \beta_2^{\,t}}, \qquad
\theta \leftarrow \theta - \gamma\, \frac{\hat m}{\sqrt{\hat v} + \epsilon}
\end{aligned}""",
         computes=("minitf.optim.Adam._update", "minitf.optim.Optimizer.step"),
         note="Decoupled weight decay (Loshchilov & Hutter): the decay shrinks θ directly and never enters m or v; "
              "t counts updates from 1; ε is added after the square root, as in PyTorch. m and v are the "
              "optimizer's moments, part of the training state (Lesson 8 §5's table).")
def check_adamw(rng):
    lr, (b1, b2), eps, wd = 1e-2, (0.9, 0.999), 1e-8, 0.1
    theta = rng.standard_normal((3, 4))
    params = {"w": theta.copy()}
    opt = AdamW(params, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for t in range(1, 6):
        g = rng.standard_normal(theta.shape)
        theta = theta * (1 - lr * wd)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        theta = theta - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
        opt.step({"w": g})
    return [compare("θ after 5 updates", theta, params["w"]), compare("m", m, opt.state["m"]["w"]),
            compare("v", v, opt.state["v"]["w"])]


@formula("gradient-clipping", lesson="8", section=5, title="Clipping the global gradient norm",
         latex=r"""
\|g\| = \sqrt{\textstyle\sum_{\text{tensors}} \sum_{\text{entries}} g^2}, \qquad
c = \frac{\mathrm{max\_norm}}{\|g\| + 10^{-6}}, \qquad g \leftarrow c\, g \ \text{ if } c < 1""",
         computes=("minitf.optim.global_grad_norm", "minitf.optim.clip_grad_norm"),
         note="All gradients scaled together, as if one vector (`torch.nn.utils.clip_grad_norm_`).")
def check_clipping(rng):
    grads = {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal(5)}
    norm = np.sqrt(sum(np.sum(g * g) for g in grads.values()))
    c = 1.0 / (norm + 1e-6)
    expected = {k: g * c for k, g in grads.items()}
    out = [compare("‖g‖", norm, global_grad_norm(grads))]
    clip_grad_norm(grads, max_norm=1.0)
    return out + [compare(f"clipped {k}", expected[k], grads[k]) for k in grads]
