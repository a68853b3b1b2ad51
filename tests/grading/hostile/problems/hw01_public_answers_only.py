"""All of hw01: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (58 public calls, keyed by a digest of their arguments; the answers for them stand
in for a table filled from the failure messages).  Off the table it answers the right answer
spoiled (+1), as a table's nearest guess would be wrong.  (The concept check is left unanswered:
it is not what this attacks.)"""
import numpy as np

def _key(value):
    """A stable digest of a call's arguments, whatever crossed (arrays, numbers, lists, dicts, the
    data of an object handed over)."""
    import hashlib

    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, np.ndarray):
            h.update(f"a{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, dict):
            h.update(b"d")
            for k in sorted(v, key=repr):
                feed(k)
                feed(v[k])
        elif isinstance(v, (list, tuple)):
            h.update(f"l{len(v)}".encode())
            for x in v:
                feed(x)
        elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
            h.update(repr(v).encode())
        else:  # an object handed over: its data
            feed({k: x for k, x in vars(v).items() if not k.startswith("_")} if hasattr(v, "__dict__") else repr(v))

    feed(value)
    return h.hexdigest()[:20]


import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9Wutv20YS/+6/YqF+KJlQiuykBU6pi0suBlJcGxxqpTFg+JgVuRIZU6TChy2l6P9+v5l9kZKd5A7nGIlN7mNmdt4zy9Fo9Lpaq9uqvhbHYjwW80yJRn3sVJmocVuN7bPY1NWiUGsRtFjx+5s3AqNVqupxqvhvOBHid7VUNa9uqqJr86qcHB39UjZt3SVtVYu1bFWdy2ImyqoVG1m3oloKAphjkSwKlWI0uZYrFYlS3ahaZLJMMdpWomm7VJVtAzxnMsmOll2ZEAqxrIqium0YTqvWmwJYvm9EUpVtLZP2OU8k1XpNu8Uqv1E8AprzG8lECvGPX8SqlqkiKHlztMwLJYBZqO1GJdi17IoC5NfXjQjev1/nZd4u9Q6R3U6Jc7U7+3ic+yO3qmmbJ37g/ftwckRMlmVzq+qGTqbpw9ZNK5JMJddi3TWtkKtaKXGbt5l4//5a7SYfmqp8/x4sPc/kRjUz8VIsZJtkkTgHw7sauAtVrloMzMEutWki8UpIkaiiAEPyctO1gJfSgle1yHGuLE/BVDN49IrIsoIFBM1Is+OM6VTrhUrTvFzZ4RdC4r0lrsq2BYvBUL/pD3FTJXLRFbLeTY5Go9HRsq7WIo6XXdvVKo5Fvt5U0ANZQiVYGs3RkRkru/VmJ2Qjys0RflK1FE2+Wld5GmzD2ZHADyAeiyciOBaPSVbBeBuGkbitcyKFtvJMK8ss2D45CUOsPZnxQRq5VsLqUGSFbbSuwq8lKdWESCZEtQK9pZhOfhCPAHQyBdhyM2HIehCYLZHVsl3LbfDJE0m0fRJjqNBWfCIqmm4t9gYJKZNWSJL+NoeEIQNYnaNCiVPCajd+mhAaWnk6Po7EtVKbNF83p/O6U6CmR7cCSjUB0vtWg/TfXpz/M/7jxa9vz4BlfKz+JsR34jaTJBwvW1DbXIusKtIGgzBXrQ2BtokJzTYTD8ryJL5V+SprY7KZYBuJdOeZQ7zgw9dkxvAI23/PsWAmtiKYTCZQ1jgvQ9rj3quuDcX4ZxHQlB3YF9Z2UquGTCWg824n/Hw5Pr4KJ3Pxd4AbzOPVL6CjG9hvQqwN3lgkOM934vQhfgB3Trw9nrAnrkolfj2f/8aWHMHL1beyTllRF/CR9PJglLDEiqZdxyv4gIYElsWbWt1E5LXluvHCC3LQFolVJCqISMEzi+Al+ZdQ2xkDIKHSefRR8hJer04yuImqJk8jiwoqRKufwS8liB3r0pveBuqosfIrVpwaarzAeEZiYgthbS5H7+I8G13BRvG8sM96k12Q9RbwM4kclIOEgelYlyMvZ5GYvaqvcMzB2Kt6dgL71zPWJ/CMHp49dbODfXp4dmVNhPlNHIqNrPtsT+5hv9OYQIZsMMT7cH+fFQmZDLxyYt8dj70QwcPPS57XJ1i2BP0G/GOR42VlWUiYSJouMqzVuqp3vDPDzgqLLaOSsLerz3ei84AzVvODFNNpAqv+b1i0AIvMzrDPkpQckgWTmjORodEhloisQnsvjvg5JyH3KOf/h488RdyJE+3wDad4/DvrCmaOl/3plDCnmRmNEz1IcPDrsZ6pbAwbWyyPHokTFkQC9sOGlU6niqppRJrXyIGKneFIXXWrTGT7tHzmJJajTMIjrMI+zdl6pVr2ECLXCC2D4Ro2EokPyZv9Rb5WGhbYm4LL6cqCS5zcCKH5m++TpwVDvHE2GGNMxkv6VYXPBQHUphuvDCul5j7lZqCxxP/gMqVz5Z6BOQWmJR/LjS1DJtC9rzR/IxLOgPtVeBUxqrt+OFIfh32/FBl3ShwBt7T39Dq3f2jtEMkXQh4L/cc4QfJ/PJhlfaP7c5RuRzM6ec+NTuaRGBn7GExmbjJxk0Ycg1ONUgYE/6QDr4x4KKMh48n9+EIvTaVPV6ahnsgOJ/76FvH4hOKxBI+SrkaO3yJD25ksEcOUAqnUpuJkJC//NZ8/cGyGVw10so8kf94LxxAHlAVqs6gqFFqU3CGJQ2nCwVe0ZGkw8YK0hBIusdhPmwKoPFxUuVLBPKRA9Qah+0r8RKYgG1nXcmdRh5c0h7B4xQvtWpvz1WUZcxXB/s+Rm03vcNLaH5De6tSUSwxKPknRrdtHeq5SpMUBMjEUMw0bxpz9OPnXZV7iYMaxaxXU6EUwh7IfM2vI53NRpacu2ytdD9CbWCgQYVlFNeitMBy1Mc0UU5oAyoB7eedeMJiT+ZkcxaQoJDeODHvyYyO3ouOV23efzWaMU5j3Mi2u70AaEOIIyLiolNmZnAuEUoXZ44k+3am4zKZXkbjU9JFStORerPxn1llb5U+UxkbpXFFVG2foWdz2gtX2HSlES0QbPiNLuy/1OkgB6AfUTeRmo8o0AGg/rsHZKeBj7Q6Io5AlqQEE53GGDNxZKUuW9KvxUj8y6DT5GEquA7z2hWIJs3p3KmgFHDmhDSct2NVsqkYF0DFo90m4L6CpLZYMDU3f4gzUPtmRJ0UPhiwvY1lkWL0k8fOWZX1YL0MkqjjzObQjEUx7dd2hWTlld0SbBZGI8Y+U+8tmf+fhDZzeEX225xalDtvXn5vSPnLJiJPUfGAVmI+PEY1vqRJBUf8QBhwzQ4a29rWsSTNO4gzne1l1+uuTVCuEkMuWmzTkqYb5yidVVw0ovFZ3qDGrPULuWCat6X813/vENrpHU71jIK/SqDSwHsJwfC/1gMDYH3jjNJY5RarFB7h7Wk/92Y6P//Imn2ruIXWnDNbogvYvobFBcuOeT7OhwVM3EG7bpLYpdR8zKLeHL2n7qcbjkjO80LBLjX3azaSbXLHnmVhqhw5JQ99LmdKMYWoiZ94XgVQrC0w2DdXOpejKJCN2p0bO8YIoQCb0JcdjMkICr0uYRlBw4BCBlGXXixFMRF57VdAru3VjOlMi6GsFFXcQ5p3JI5F3mD9OaS67JzM86A8RkLCXJw4WGD85Y0eZynAf6B05ZDAly7wvkTSz3ySbfErZpOn5Un1clZTr3ChqD6NQKTEEo9dGfmPbtrBJL6oHzS0dVbHp7CP8IuxHvvXbWGcVDY5w4Hqf6pBDPYepy8rEhVXPM3H5WLxSV/fmT3oZhRSPWntjXWsvhxyEcwpGxL4RhLyAiY96rgkU+OSED2Q1dFHn6Ur5hMS++6REcQfwlXL9gn6qoopGHaJhFxzQugEOF0uoFmx3G3XKpEz4mRGOdLE5mpk7CteKr+kWgsIXg2aEFwPO3M8TA/IOrlzcUeD2xYy5RV3JNJEN3HmlGWdLAkr7IytMfQ53vM/Vtba0HR/3ndWZIGUIe815bRF7mt9vEMFmL0y2cKC0/U4R1qUXhsSvV92FVt1UK4tRBECy0nQagbGFH6uje/WZ+urphW9aIsYEQ759nfxY56zvNfTtB34e7auwXvyOiD1YPNBR3cQczvas4puYXi8ycyI07Zf8PkIDsovOWkd0Yc7mgkDF9pJN74hsafpc06WjeD+GG3aah8e9doez4vlBl0UvdqpBjRX96AFb1muJ237HsJvxv9jwHRRfmGL8bHbloWtr02tuJfeQvF3Z60FtfnOdIDCf9gI87+dArq1p5OyBBt/p8OoHFt8koj6jiNpQatfRFTK8x6ag/O4hw6RDF1t0MXOwCQq5gIFGAtUFfOa1KtnZ5PSHr2QXMKw8PXA5z1y0XOIM7BWp31cV9sW5lZcQtkZiHMf0ytb1tanB6b6aw89xaBHaiGN26pCjO82cFtd3xAKGGBlkrFRwW3D6e61JlD+6DjFXPkTzTifxulREnXUvcM+mr0awhoenJgxv6xV1QMj4mIBTzXTxE3G9B4gaFzQjNvrGkTt2LrbQVqJjSvUAN8+wk4FPqXxIXdsAnGb0oLW4lbtBPe9qAIIWWf7yUY1I7U3xoRL5uFVUq5xLXsQu+wzV0AAiOJuzu3RoYUJoklV5wn11WcK2W7VSNX134cuLYaOf4Iu8FQnfi4OlTt1g4WcHIYOwM1P/gJvRakTtwTSdyDagHYbW9GJYO225dsL8Jabj9uo5yNgo2fI3HqQEXFd0mz23o+kjj6KfoEmbXWDqgzN2PfHZN/E1P3Av+OCTB397P/h8onnYNrClI4BqvB6mN3QR32sL09cwatv6PEby4zmeOv0UiReh0Z2DRixFSd/05F5Aryt7X77T9eJ+0NgoKkdXYT+FRMB67ZOCtzxvzfWYiMICR6DNvvnFfRLR6b03vi+qFyNrfxH5PaG7JbZfaFCkZka5feYzDL7HhnPAoc8F6msOxs1zobaSr8L6PTIHVVJmQuA+91mG+Fn0PrR4YrIXyZ6I29IwUe7PW6wzzvht+a5vDY0wT4W+SXas/LtmZWg8mOfiOTNDM4bqGVvEqEEBb+BCOaAVxkVZFYudqrvO45eUzlmMDWz3KqHToD4F3Ev8kobfTf79tHv36lZ//TFsSUBOWetscCOLjhIlxJBrtWt0gUB53Vv+fXOfbcSayV99xL2bVmR18Qch8T+LP/jmX2AtyZ6ufytjr2imfSsxxS0LhK+NhsaCY5oTQr37wKDqfRxOAweQ77qPPDA9jUdZ+8E5xvz7kZDh575Y6tnsc9ijvuMiDNN9tNpF3GhEdA096CV1EJM64JNhEtyH3rapCcpwIUg0XsdVJJ0vSJwbeu4p6WzF0SAESr6N/SCgKQbJR0IBTPtJO4F6YXzzxw45O12P19UHpT+ApGxed+ZcrWydx14Y5Qj6seeJdWvutU3qnbQf6xN7l0wLQYmbJmU/6ORJwGh0afOR4L7lkQG3jYITdI7efGd8800i948UuQffWT4Yzhdvzt+d/X4Ocf6pvQiwT45x1FEyitznD/kWIrN9vxOR0gePC/omNMjYoaB+pxtQZTOLwTeeHu4JwV1ouLo7T+3DrEIJjHQqVXRPBqbndA1K1yDgO/K8tMI7fYarO8v6rjVBrriguz6Ip4HHNA1nRvOU0EiNhr5MTXf04WK+zqlHzfHSVa10PUOg297HxB7QMwKUakA2WQKVCH05ffWRp3xTGbnml56jbF2t6btOZOu79aIqPMQfehxA+LT1DA60UqWqpQ6j/YaaTuUp5aXahL5AyKvOFBQe7o89iR2Wl/1Wfb4qq9rk0o7jyn0tY3paG9quq8Sjv47+Ax7YP2Y=')).decode(), _REF)

_PUBLIC = set(['00a989a63c0de5a8fed5', '02fbfef2c4688e9e1bbc', '0373ce763a58db907a99', '04c3f5ff48779aed1e00', '065ca7822242885616be', '07da6f0b54e830739eab', '10735e310f369f28508e', '175d03ca2a4877d6b202', '1c4be1165a086f2cea9d', '240236f6c2dc45a9eac5', '25cf9e7f016a177b50b5', '2851bf6c4e16b283f42f', '40fcf59cdb28c36af228', '43722410b37e08e2ba7d', '4522eca696b1f5a4ebe1', '4704fd9ac522eaeea706', '4f1bbd81485b57acefb9', '4fdf03ce099e052698af', '530aef1b582a4c8a2a58', '54401974e27d26b70ab9', '54480e36358e646a5578', '546773cc5bc922d3798c', '56945d0c2a9c83db1dd4', '5959f12c6384ee1817bb', '5ac081fc1bc2a5fe278c', '5b0a4a4e365ed4af1402', '5d88c29d7a1952c3ee88', '5da287afe6c7f5dfc775', '5ea247a15a6cec58f6b5', '6086df1780758ba57745', '65c6e9af252a3eb474df', '71badd9516c0b70b8188', '73b2a7228ca46c5bd64e', '7ea585bcc62a80d5d421', '8c7a3be42830c37b92ff', '91a6982a9d007491abde', '92be2ca8e4cfae95b696', '93674eadc40deda375a2', '9782578a8b6e58033e93', '9d89d9380bfd1528bd78', 'a1e3c5ff09ddd9257d07', 'a8d3d1670bd896388f47', 'ad52f59abf43d74a9c2b', 'b40ec0e9b8cd3a52eec7', 'b997ad6af00004290065', 'b9bcbc430048509dd318', 'bc46c21685019ffb7a33', 'c60646f04450263ca009', 'c62fb430c5d10726ab7b', 'c6ed8f68bb532bfb6e58', 'c6f14cee854f61412495', 'cec38767d58927c2620a', 'd76617f5f91aa9bc91df', 'dd50a6b2b29e1e932e87', 'eeb4cb756175fee885dd', 'efbe1192de28360bc727', 'f02bdcc517855096a385', 'f157121bab8aac5c5acd'])


def _spoil(v):
    if isinstance(v, np.ndarray):
        return v ^ True if v.dtype == bool else v + np.asarray(1, dtype=v.dtype)
    if isinstance(v, dict):
        return {k: _spoil(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_spoil(x) for x in v)
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float, np.number)):
        return v + 1
    return v


def _answer(name, args, kwargs):
    out = _REF[name](*args, **kwargs)
    return out if _key((name, args, kwargs)) in _PUBLIC else _spoil(out)


def lstm_step_forward(*args, **kwargs):
    return _answer('lstm_step_forward', args, kwargs)


def lstm_step_backward(*args, **kwargs):
    return _answer('lstm_step_backward', args, kwargs)


def rnn_forward(*args, **kwargs):
    return _answer('rnn_forward', args, kwargs)


def rnn_backward(*args, **kwargs):
    return _answer('rnn_backward', args, kwargs)


def condition_decoder(*args, **kwargs):
    return _answer('condition_decoder', args, kwargs)


def condition_decoder_backward(*args, **kwargs):
    return _answer('condition_decoder_backward', args, kwargs)


def scheduled_sampling_inputs(*args, **kwargs):
    return _answer('scheduled_sampling_inputs', args, kwargs)


def scheduled_sampling_backward(*args, **kwargs):
    return _answer('scheduled_sampling_backward', args, kwargs)


def additive_attention_forward(*args, **kwargs):
    return _answer('additive_attention_forward', args, kwargs)


def additive_attention_backward(*args, **kwargs):
    return _answer('additive_attention_backward', args, kwargs)

ANSWERS = {'1.6.1': None, '1.6.2': None, '1.6.3': None, '1.6.4': None, '1.6.5': None, '1.6.6': None}
