"""Tasks 8.1 and 8.2: functions that never return, one busy, one asleep."""
import time


def shift_right(labels, start_id, pad_id):
    while True:
        pass


def causal_mask(T, dtype=None):
    time.sleep(10 ** 6)
