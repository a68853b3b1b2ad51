"""No task: correct code that prints garbage -- at import, on the raw file descriptors, and in
every call, including text that looks like a pytest summary and a results JSON.  It must lose
nothing."""
import os
import sys

print("=" * 30, "24 passed in 0.01s", "=" * 30)
print('{"score": 1000, "tests": []}')
os.write(1, bytes(range(256)) * 40)
os.write(2, b"\xff\xfe garbage on stderr \x00\x01\n")
sys.stdout.write("\x1b[2J\x1b[31mred\x1b[0m " * 50 + "\n")

_quiet_shift_right = shift_right  # the reference's, defined above in the built file


def _noisy_shift_right(labels, start_id, pad_id):
    print("shift_right called!", labels.shape, "\x00\x07" * 10)
    os.write(1, b"\x80\x81 FAILED hw08_tests.py::test_x\n")
    return _quiet_shift_right(labels, start_id, pad_id)


shift_right = _noisy_shift_right
