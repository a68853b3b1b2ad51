"""Tasks 6.2 and 6.4: the parameters read from a live model (EncoderDecoder built, then
num_parameters(): no source scan sees the method, caught when it runs), and the FLOPs from
Lesson 6's own formula (imported: found in the source).  No credit for either task; tasks
6.1 and 6.3 keep their points."""
from minitf.config import ModelConfig
from minitf.course import l06_encoder_decoder
from minitf.models import EncoderDecoder


def parameter_count(config):
    model = EncoderDecoder(ModelConfig(**config))
    out = {part: 0 for part in PARAMETER_PARTS}
    for name, p in model.parameters().items():
        part = "positions" if "_pos." in name else name.split(".")[0]
        out[part] += p.size
    out["total"] = model.num_parameters()
    return out


def forward_flops(config, B, S, T):
    return l06_encoder_decoder.forward_flops(ModelConfig(**config), B, S, T)
