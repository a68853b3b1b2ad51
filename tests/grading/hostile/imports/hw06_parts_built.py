"""Task 6.2: no formula -- the model is assembled from minitf's own parts (``EncoderDecoder.__init__``
is switched off, but ``Embedding``, ``PositionalEncoding``, ``EncoderBlock``, ``LayerNorm`` and
``add_decoder_side`` are not), and its arrays are counted by walking the modules by hand
(``Module.parameters`` is switched off too)."""


def parameter_count(config):
    import numpy as np

    from minitf.blocks import EncoderBlock
    from minitf.config import ModelConfig
    from minitf.layers.embedding import Embedding
    from minitf.layers.layernorm import LayerNorm
    from minitf.layers.positional import PositionalEncoding
    from minitf.models import common
    from minitf.module import Module

    c = ModelConfig.from_dict(config)
    rng = np.random.default_rng(0)
    D = c.d_model
    m = Module(np.dtype(c.dtype))
    m.src_embed = Embedding(c.src_vocab_size, D, c.pad_id, rng=rng)
    m.src_pos = PositionalEncoding(c.max_len, D, c.positional, rng=rng)
    m.encoder_layers = [EncoderBlock(D, c.n_heads, c.d_ff, rng=rng) for _ in range(c.n_encoder_layers)]
    m.encoder_norm = LayerNorm(D)
    getattr(common, "add_decoder" + "_side")(m, c, rng, True, tgt_embed=m.src_embed if c.share_embeddings else None)
    seen = set()

    def size(obj):
        if isinstance(obj, list):
            return sum(size(o) for o in obj)
        if not isinstance(obj, Module) or id(obj) in seen:
            return 0
        seen.add(id(obj))
        return sum(int(p.size) for p in obj.params.values()) + sum(size(v) for v in vars(obj).values())

    out = {"W_U": int(m.params["W_U"].size) if "W_U" in m.params else 0}
    for part in ("src_embed", "tgt_embed", "encoder_layers", "encoder_norm", "decoder_layers", "decoder_norm"):
        out[part] = size(getattr(m, part))
    out["positions"] = size(m.src_pos) + size(m.tgt_pos)
    out["total"] = sum(out.values())
    return out
