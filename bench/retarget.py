#!/usr/bin/env python3
"""Times how long a limit changed while a transfer runs takes to show in its rate.

    retarget.py START_COMMAND SOURCE CHANGE_COMMAND NEW_RATE [AFTER_SECONDS=2]
Runs START_COMMAND, samples SOURCE (a file whose size is the bytes moved so far) every 10 ms,
runs CHANGE_COMMAND after AFTER_SECONDS, and prints as JSON the seconds from just before
CHANGE_COMMAND started to the start of the first 0.2-second window whose rate is within 10%
of NEW_RATE (bytes per second): the command's own round trip is part of it, as it is for a
user. Also prints the rate of the second before the change and of the second after it took
effect.
"""
import json
import os
import subprocess
import sys
import time

STEP = 0.01
WINDOW = 0.2


def size(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def main():
    start_command, source, change_command, new_rate = sys.argv[1:5]
    new_rate = float(new_rate)
    after = float(sys.argv[5]) if len(sys.argv) > 5 else 2.0
    subprocess.run(start_command, shell=True, check=True, stdout=subprocess.DEVNULL)
    begin = time.monotonic()
    samples, changed_at = [], None
    while time.monotonic() - begin < after + 5:
        now = time.monotonic() - begin
        samples.append((now, size(source)))
        if changed_at is None and now >= after:
            changed_at = time.monotonic() - begin
            subprocess.run(change_command, shell=True, check=True, stdout=subprocess.DEVNULL)
        time.sleep(max(0.0, begin + len(samples) * STEP - time.monotonic()))

    def rate(t0, t1):
        first = next(s for s in samples if s[0] >= t0)
        last = next((s for s in samples if s[0] >= t1), samples[-1])
        return (last[1] - first[1]) / (last[0] - first[0])
    effect = next((t for t, _ in samples if t >= changed_at and t + WINDOW <= samples[-1][0]
                   and abs(rate(t, t + WINDOW) - new_rate) <= 0.1 * new_rate), None)
    print(json.dumps({
        "before": rate(changed_at - 1, changed_at),
        "seconds": None if effect is None else round(effect - changed_at, 3),
        "after": None if effect is None else rate(effect, effect + 1),
    }))


if __name__ == "__main__":
    main()
