#!/usr/bin/env python3
"""Samples how many bytes a transfer has moved, every 100 ms, until it is done, then prints
the average rate (from its first byte to its last, both estimated between samples) and the lowest
and highest 1-second rate after the first second.

    rates.py LABEL TOTAL_BYTES START_COMMAND SOURCE [SOURCE...]
START_COMMAND (a shell command) starts the transfer once every counter has its base.
SOURCE is `file:PATH[|PATH2]` (the size of the first path that exists: a partial file, then
the finished one) or `proc:PID:FIELD` (a counter of /proc/PID/io such as rchar or wchar,
counted from when sampling starts; PID `child` is the start command's process). With several
sources, each is reported on its own and their sum as the total.
"""
import json
import os
import subprocess
import sys
import time

STEP = 0.1  # seconds between samples; rates are computed over windows of WINDOW samples
WINDOW = int(os.environ.get("WINDOW_TENTHS", "10"))  # samples per window (10 = 1 s)


def reader(spec, child):
    kind, _, rest = spec.partition(":")
    if kind == "file":
        paths = rest.split("|")

        def size():
            for path in paths:
                try:
                    return os.stat(path).st_size
                except FileNotFoundError:
                    continue
            return 0
        return size
    pid, _, field = rest.partition(":")
    if pid == "child":
        pid = child.pid

    last = [0]

    def counter():
        try:
            with open(f"/proc/{pid}/io") as io:
                for line in io:
                    name, _, value = line.partition(":")
                    if name == field:
                        last[0] = int(value)
        except (FileNotFoundError, ProcessLookupError):
            raise Finished()
        return last[0]
    base = 0 if pid == getattr(child, "pid", None) else counter()
    return lambda: counter() - base


class Finished(Exception):
    """The process being sampled has exited: its transfer is over."""


def main():
    label, total, command = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    specs = sys.argv[4:]
    child = None
    if any(spec.startswith("proc:child:") for spec in specs):
        # The command's own process is sampled from its first byte: its counters start at 0.
        child = subprocess.Popen("exec " + command, shell=True, stdout=subprocess.DEVNULL)
    readers = [reader(spec, child) for spec in specs]
    if not child:
        child = subprocess.Popen("exec " + command, shell=True, stdout=subprocess.DEVNULL)
    start = time.monotonic()
    samples = [(0.0, [r() for r in readers])]
    finished_at = None
    while True:
        time.sleep(max(0.0, start + len(samples) * STEP - time.monotonic()))
        now = time.monotonic() - start
        try:
            values = [r() for r in readers]
        except Finished:
            finished_at = samples[-1][0]
            break
        samples.append((now, values))
        if sum(values) >= total * len(readers) and finished_at is None:
            finished_at = now
            break
        if now > 600:
            break
    child.wait()
    report(label, samples, len(readers), total, finished_at)


def report(label, samples, count, total, finished_at):
    def stats(index):
        series = [(t, v[index] if index is not None else sum(v)) for t, v in samples]
        target = total if index is not None else total * count
        # 1-second windows after the first second, ending before the transfer finished.
        seconds = [series[i:i + WINDOW + 1] for i in range(WINDOW, len(series) - WINDOW, WINDOW)]
        steady = [(w[-1][1] - w[0][1]) / (w[-1][0] - w[0][0]) for w in seconds
                  if len(w) == WINDOW + 1 and w[-1][1] < target]
        # The moment the last byte arrived: extrapolated from the last sample before it at the
        # rate of the second before that sample, and kept between it and the next sample (a
        # transfer that ends just after a sample is not charged up to 100 ms more).
        end = finished_at or series[-1][0]
        for index, ((t0, v0), (t1, v1)) in enumerate(zip(series, series[1:])):
            if v1 >= target:
                earlier = next(((t, v) for t, v in reversed(series[:index + 1]) if t <= t0 - 1.0), None)
                end = t1
                if earlier and v0 > earlier[1]:
                    rate = (v0 - earlier[1]) / (t0 - earlier[0])
                    end = max(t0, min(t1, t0 + (target - v0) / rate))
                break
        # The rate is timed from the first byte (not from the start command), so that neither
        # tool is charged for its start-up: a process, a connection, a control-socket round
        # trip. The first byte's moment is extrapolated back from the first sample with bytes at
        # the rate of the second after it, and kept between that sample and the one before.
        begin = max((t for t, v in series if v == 0), default=0.0)
        first = next(((t, v) for t, v in series if v > 0), None)
        later = first and next(((t, v) for t, v in series if t >= first[0] + 1.0), None)
        if first and later and later[1] > first[1]:
            rate = (later[1] - first[1]) / (later[0] - first[0])
            begin = min(first[0], max(begin, first[0] - first[1] / rate))
        moved = series[-1][1]
        return {"average": moved / (end - begin) if end > begin else 0, "low": min(steady) if steady else None,
                "high": max(steady) if steady else None, "bytes": moved, "seconds": round(end - begin, 2)}
    result = {"label": label, "total": stats(None)}
    if count > 1:
        result["each"] = [stats(i) for i in range(count)]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
