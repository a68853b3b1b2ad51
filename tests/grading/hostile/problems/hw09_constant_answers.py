"""All of hw09: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WWuP28YV/a5fMd0ADbmh5N21E6CKZaBp7MZw4CzshVvAWHBH5EhiRXJYztCynPq/99y5w5ekdQoUayPIUsO573MfMzw7O/tFF2qn6634i5hOxctypWpVJmomxBvln4XReWMzXc4mk5elsXWTWF2LQlpVZzKfi1JbUcnaCr0SdqNEhk0yz1WK1WQr1yoSpfqgarGRZYpVq4WxTapKayDnuUw2k1VTJiRCrHSe651xfKwqqhxSvjUi0aWtZWJ/dC8SXRRELdbZB+VWaiWNLrNyDYZ/eynWtUwVMcnMZJXlSkCwUB8rlYBo1eQ5tK+3RgR3d0VWZnbFFGKzuyA/1J3p02nWW2yVseZRv3B3F84mNxvibnaqNmQYqwfSyopko5KtKBpjhVzXSoldZjfi7m6r9rN/Qd27O3j07UZWyszFT2IpbbKJxCuxVLIwkXgnPuhELptc1nv8itVHCxuscj4cvroRVtZrZUWuyrXdRJO3CFlTQ31emE3Ozs4mq1oXIo5XjW1qFcciKyqNmMkS4ZPkezOZ+LWyKaq9kEaU1WQy+UYsHuIf+N5IA+DNLgl6VlfTrYsTPVUPJjVVK5IQb2MAAwgOcr3OLNy9DecTgX/wVadXIMO54A0imM1mCEMops+650gAHysEDJh1od9OEeGcomFcOiiAW9R6h0AT75sMqHQoONr8QeYNUs3KvQh+adZrYFm8kIkDO5LriM7tj0RmHeNUYwPlYaKb0sLArSpNiGTYioW4EADvVjxbAFJbpSojKBv3yA7kS2uz+6sbi/1lNZN1LfedaxJd7Rc3daNCIb7pHSGR1jvhtkY+8avGIltTu6+UY/gO7MB0Zgjl76eXt241W5FeI8XY9/SvVgBoSVRuaQtbnUoGyAywGgn5MTOL6WX4nhURU7Gdu/+L78Tlba/iZXiPm1tb35O9T0nELWRMIYSiCfreP0L9u5F5m9mOFcXITA5UnXTAqg6BVUUCRSbmmOBPTDFYXJ6C2xJwK5skVw3KlOMCFaIvIdAD6wUlN2mYoxCiEGRble8ZBqKBArUqNEql9Eu7DRVF2l9IYwiomeUa2Rnu2DKw8S4zMDtD3Xy6EEhXUc3BQ1r2hdjoPDXMCrGEOJfGVMGdNEs7k1obA5BWjrGjAzypeh47RxT6wAgjZL4jUUT4f2C2hV9Fil7OLu6Fna5TNCzPd32EPZSLrEwXZ1BnmauzcV6MYrDKasMsPzE7K7cqlrku1zExY7ZOXI/sGRgghQJsX+Va2h+ejCWQPmgCbKtjXtV6aVgA+lzwCTH6xPkxvZzfOmoHD9JMl4oC6vomwltAatEUAzaPFvwwM00R9BYjMmlWGPaq2540BcvEA+11VL0ZI51bpLmSyMAgmGBQ6GDmk4qgGnsTF07GUxcswl1rSIuKpYN1jv6f7h0Oexgec2OHwN5gVJPA9xiDkbgI51QWXsjcqFbsEJgDRKJRwAzgqnDFLByI9jEpKruPiTAYacQ7sQGFcwgK3tThYkQz9u8SIxaVp34gYKKuxjHtoMAdl64H7/BX1OEJdsYiu/XKjTjCKFlj9nvITk9yYhIa8FOi0UldQY09Vv3M5P/GlSplbtHPlDZxlh4V6au5GHASwU8Y2MIBQ15pqzRBpqS5zY10XVlcYeY0G6AbLjG+gj+nysvznaFBmDLFLeU04zp/IWelSMAkSzEVR8LpkIrlXlB3qJuSBmCBPASx4wmtpk4rHpuvaLQEfgNNwzgh9pU4F+8iXnWFKuQcktYXsVdcvFPthguMnujxjvVT+OcZCvhvPPIzZ5oCNJIF+0iTrORt3l7AWJZbVpiUfOR9fn4u82ojnY6Ot1fzWLJnh2nowLPjjuAjAMR3YeFk55pFUViIISDezyOB/14jHLeYITqqcIaXROiCSr7ikka/zvGsxjHD5GN8HcUgMG4eUxLrM/eoezj5V+D/6rblf/UqHISl5dnC7mQjYQnY1YoJB8w6DmS228X1jlml2YdCp4GjfTcko0kB5ZqJ+NmRcR81MeIBDgNuC584h6K/GcCkx7DhII+iy2CZexz3GO7wIs7PhUOMY8zbCW4Lr5DzJjz5Z7IsM7TBqqD3nn/fhzIcMFKp8xC7ZbfBMTDoJESdAz0Laq4HxMMAnSQf6RC1NTmEda7TB2xjSEaOS9Ifu/FUrqw1igzak2CsucnBHwLAKau5WfhujkP2GLXs0C/Ctoes9yNl5cCHhyjtMUjiOqj2pANYnqJ1r+8l/lJ+9N4/Re4bYtCpP5jBspImsGig330vPf9uqjwC1gnCA+yEX6MhP3ZHbkCp0lBD1dO1KlUtra5RxIrsI90RPGhjpvE89oLila53sk6D69hNMTgyxWsKskSPqxO6+Ih4volN9kkd9eTHfE6/RtgdofB8UMoDd1ihRQzNibQwNZZpiv3uEAXU3virlfYkRehP05mESEomKVayTPY45qfqo/huMe/OUEg4u9PtTUulTeYuUWBZnrt7pqVGrdqpbL2xxw3qhhuU13TQnt5iVR6cl68Z0J8UzlCBV3rgj4gP3IuWmfvVlbfOQJ/j1Z66nx+nnWd4LObuh9I6IHzLREsU9I+sw7LWMk0AYuRB4CqFLNfoj64YEAvPKOpZ+N7zhzxuwvfMYH4fj909PDxIehXmx7RdXINrvHMWRaxUxHxDPjN2RyXnKbrWnKM2VEpad3PJp440xamaQ8POm7/D4ODhN3Zni0XP1ecZTXjEO6LqTOsYxHEEGEzxw6J07a8XRklDg7/LmhQG3Z85p7KFrhnS6zE6KB/SVtn2DUGLU8qt0E/ZO7a91IL6Prem8AwKSKsaT6xrCQNrJE6c0T1tQoPvNaUPTa2cS20As9txohylSJcSUBVEpws9OeR/gojPs/DgxDrCfueTk9FNB/Ef5JsnZdch24bbOkiEw+M1/E/bnFHIwYN3LWvPV345gz2bI1M8mtIOLKlHSyq/Rs950vachM4fcq0w2xnzYHJf/v31b2+exy9f//z8n3T4vby46NKI5cckP0Cq5HKpckwFXKwX8OxR1jyhwt+5syXxUXG9hJiN86NNkF8pXMwbY14ZIwnykObb+HdLGZF/dj8yuoUIZGyjDKWI/kAOPYCcN38rngr7GYlkv+U8wZNPKQMpaVaj8eR7CKPJEwo/FUnoT521btab9khJn25E0u5L6H4FkBulHulFJyi2808LMfLnGJBsEg3gpQ3o0aHXF95k0Lz4BkSeSLOEMvPSXbj010nSTZhI+dGJhiBE1aZ0VXSpMD3gPMjtmm6f9a70p19DkyCP1d7954IaDn3zKYg//HyQaefOcF4M+2g5hutBHHlfv2GYgb1xYJj++ih1t0t96q5JDR8cbw+HDi3Bbnhf0u97thhspB1dNAkbgaVvChjzrcY2f0i4BzSCgMpP3ZSS0t7+ssEhY6Ar/vfdICKpi9N8FJNuBeUoTYaVpk2JduiVfjT5GtXme6o2hppNQ18ijSyqHIcwHm9Vyt8qzIPOuBAUs5ggVYnGOYt/YtqgzwK1SjP30RM/GqPitc5xfq9keure6ft5W2vc/SkVnBVdBRJROHw1aMq9BFHQ10203HZMFXZ62d4BO53cOPtj//4CwNq471G1/5zE2KJiAhXd/Q7dw/hLUFLj4Fp+Vx5dfR554bCzgYjQdEFl4Ggzvxnu43oxcGRbL4itX1buNsvSBfbKP3My0z3XonP8jGarIOxedWrQZXdP8J8TetGlB0dtiP3u/M9hPQEAGBFyAL9GPvxA+TD6Mv1gMv/6+u0/nr+hg8zvDAlIn12ezcVZchb1K1e0shyuPKaVdLjyhFbkcOX7ls/nyX8Bdz3EIQ==')).decode(), _REF)


def _zero(v):
    if isinstance(v, np.ndarray):
        return np.zeros_like(v)
    if isinstance(v, dict):
        return {k: _zero(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_zero(x) for x in v)
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float, np.number)):
        return type(v)(0)
    return v


def top_k_filter(*args, **kwargs):
    return _zero(_REF['top_k_filter'](*args, **kwargs))


def top_p_filter(*args, **kwargs):
    return _zero(_REF['top_p_filter'](*args, **kwargs))


def beam_step(*args, **kwargs):
    return _zero(_REF['beam_step'](*args, **kwargs))


def copy_mixture_forward(*args, **kwargs):
    return _zero(_REF['copy_mixture_forward'](*args, **kwargs))


def copy_mixture_backward(*args, **kwargs):
    return _zero(_REF['copy_mixture_backward'](*args, **kwargs))


def coverage_loss(*args, **kwargs):
    return _zero(_REF['coverage_loss'](*args, **kwargs))


def mix_inputs(*args, **kwargs):
    return _zero(_REF['mix_inputs'](*args, **kwargs))

ANSWERS = {'9.6.1': None, '9.6.2': None, '9.6.3': None, '9.6.4': None, '9.6.5': None}
