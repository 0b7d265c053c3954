#!/usr/bin/env python3
"""Samples how many bytes a transfer has moved, every 100 ms, until it is done, then prints
the average rate (from its first byte to its last, both estimated between samples) and the lowest
and highest 1-second rate after the first second.

    rates.py LABEL TOTAL_BYTES START_COMMAND SOURCE [SOURCE...]
START_COMMAND (a shell command) starts the transfer once every counter has its base.
SOURCE is `file:PATH[|PATH2]` (the size of the first path that exists: a partial file, then
the finished one), `sink:PATH` (bench/sink.py's COUNTFILE: sampled while it runs, then reported
from the exact arrival times the sink wrote to PATH.arrivals), or `proc:PID:FIELD` (a counter of
/proc/PID/io such as rchar or wchar, counted from when sampling starts; PID `child` is the start
command's process). With several sources, each is reported on its own and their sum as the total.

Reported, as JSON: `average`; `low`/`high`, the 1-second windows laid end to end after the
first second (a sample every 100 ms, or exact for `sink:`); `anyLow`/`anyHigh`, the same over
EVERY 1-second window (sliding: starting at each sample, or at each read for `sink:`), which a
sender whose beat happens to divide the window evenly cannot flatter; and `burst`, the most
bytes moved above the average rate over any interval (the sigma of the (sigma, rate) token
bucket the transfer fits), which shows smoothness below one second; and `cpu`, the seconds
of CPU the transfer cost: the start command's process, or with CPU_PID the process that moves
the bytes (a daemon) from the start to the last byte.
"""
import bisect
import json
import os
import subprocess
import sys
import time

STEP = 0.1  # seconds between samples; rates are computed over windows of WINDOW samples
WINDOW = int(os.environ.get("WINDOW_TENTHS", "10"))  # samples per window (10 = 1 s)


def reader(spec, child):
    kind, _, rest = spec.partition(":")
    if kind in ("file", "sink"):
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
    daemon = os.environ.get("CPU_PID")
    cpu_before = cpu_seconds(daemon) if daemon else 0.0
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
    _, _, usage = os.wait4(child.pid, 0)
    cpu = cpu_seconds(daemon) - cpu_before if daemon else usage.ru_utime + usage.ru_stime
    report(label, samples, len(readers), total, finished_at, specs, cpu)


def cpu_seconds(pid):
    """User and system CPU time a process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def arrivals(spec, total):
    """The exact arrival series of a `sink:` source, (seconds, cumulative bytes) per read, on
    the sampler's clock (both are CLOCK_MONOTONIC); waits briefly for the sink to write it all."""
    path = spec.partition(":")[2] + ".arrivals"
    deadline = time.monotonic() + 5
    while True:
        points, moved = [], 0
        with open(path) as log:
            for line in log:
                fields = line.split()
                if len(fields) == 2:
                    moved += int(fields[1])
                    points.append((int(fields[0]) / 1e9, moved))
        if moved >= total or time.monotonic() > deadline:
            return points
        time.sleep(0.05)


def windows(series, begin, end, width, starts, exact):
    """Rates over windows of `width` seconds that start at `starts` and lie in [begin + 1, end):
    after the first second, before the last byte. An exact series is a step function (the bytes
    so far at each moment), read at both ends of the window; a sampled one is read at the samples
    nearest the ends, over the time between them."""
    times = [t for t, _ in series]
    rates = []
    for start in starts:
        if start < begin + 1 - 1e-9 or start + width > end:
            continue
        first = bisect.bisect_right(times, start + 1e-9) - 1
        last = bisect.bisect_right(times, start + width + (1e-9 if exact else width / 20)) - 1
        if first < 0 or last <= first:
            continue
        span = width if exact else times[last] - times[first]
        rates.append((series[last][1] - series[first][1]) / span)
    return rates


def burst(series, rate, exact):
    """The most bytes moved above `rate` over any interval: the sigma of the smallest
    (sigma, rate) token bucket the series fits, how bursty it is below one second. In an exact
    series a read's bytes arrive at once; between samples they are taken to arrive evenly."""
    lowest, worst, before = float("inf"), 0.0, series[0][1]
    for t, moved in series:
        lowest = min(lowest, (before if exact else moved) - rate * t)
        worst = max(worst, moved - rate * t - lowest)
        before = moved
    return worst


def report(label, samples, count, total, finished_at, specs, cpu):
    def stats(index):
        if index is not None and specs[index].startswith("sink:"):
            return exact(arrivals(specs[index], total))
        series = [(t, v[index] if index is not None else sum(v)) for t, v in samples]
        target = total if index is not None else total * count
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
        average = moved / (end - begin) if end > begin else 0
        # Tiled windows start every WINDOW samples; sliding ones at every sample.
        times = [t for t, _ in series]
        return summarise(series, begin, end, average, moved, times[WINDOW::WINDOW], times, exact=False)

    def exact(series):
        # From the first read to the last: the bytes after the first read over the time between.
        begin, end = series[0][0], series[-1][0]
        moved = series[-1][1]
        average = (moved - series[0][1]) / (end - begin) if end > begin else 0
        tiled = [begin + 1 + i * STEP * WINDOW for i in range(int((end - begin) / (STEP * WINDOW)) + 1)]
        # A window's lowest rate starts at a read; its highest ends at one.
        sliding = [t for t, _ in series] + [t - STEP * WINDOW for t, _ in series]
        return summarise(series, begin, end, average, moved, tiled, sliding, exact=True)

    def summarise(series, begin, end, average, moved, tiled, sliding, exact):
        width = STEP * WINDOW
        steady = windows(series, begin, end, width, tiled, exact)
        every = windows(series, begin, end, width, sorted(sliding), exact)
        return {"average": average, "low": min(steady, default=None), "high": max(steady, default=None),
                "anyLow": min(every, default=None), "anyHigh": max(every, default=None),
                "burst": burst(series, average, exact) if average else None, "exact": exact,
                "bytes": moved, "seconds": round(end - begin, 2)}

    result = {"label": label, "cpu": round(cpu, 2), "total": stats(None) if count > 1 or not specs[0].startswith("sink:") else stats(0)}
    if count > 1:
        result["each"] = [stats(i) for i in range(count)]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
