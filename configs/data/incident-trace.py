#!/usr/bin/env python3
"""Writes incident-trace.csv: fifteen minutes of a client's calls to a search service during an
incident, as a CSV access log, from a known model, so that `retrysim calibrate --incident` can
be held against it and the incident replayed under other policies.

    python3 configs/data/incident-trace.py > configs/data/incident-trace.csv

The model: first attempts arrive as a Poisson stream of 6 a second. The service has bursts
(Gilbert–Elliott): good spells of 40 s on average, in which 1 % of calls fail with a 503, and
bad spells of 4 s, in which 70 % do and the rest take three times as long; and an outage from
420 s to 480 s in which every call fails at once (a 503 in 5 ms). Round trips are lognormal,
median 80 ms, sigma 0.5. The client tries each call once: the policy in effect is retrysim's
`as-observed`. Standard library only; the same bytes on every run.
"""

import math
import random
import sys

SEED = 20261205
START_S = 1_796_644_800  # 2026-12-05T12:00:00Z
SECONDS = 900
RATE = 6.0
GOOD_S, BAD_S = 40.0, 4.0
FAIL_GOOD, FAIL_BAD = 0.01, 0.70
OUTAGE = (420.0, 480.0)
MEDIAN_S, SIGMA = 0.080, 0.5


def main():
    rng = random.Random(SEED)
    out = sys.stdout
    out.write("timestamp,operation,duration_ms,status\n")
    bad = rng.random() < BAD_S / (GOOD_S + BAD_S)
    until = rng.expovariate(1.0 / (BAD_S if bad else GOOD_S))
    t = 0.0
    while True:
        t += rng.expovariate(RATE)
        if t >= SECONDS:
            return
        while t >= until:
            bad = not bad
            until += rng.expovariate(1.0 / (BAD_S if bad else GOOD_S))
        latency = MEDIAN_S * math.exp(SIGMA * rng.gauss(0.0, 1.0))
        if OUTAGE[0] <= t < OUTAGE[1]:
            status, latency = 503, 0.005
        elif rng.random() < (FAIL_BAD if bad else FAIL_GOOD):
            status = 503
        else:
            status = 200
            if bad:
                latency *= 3
        out.write(f"{START_S + t:.6f},GET /v1/search,{latency * 1000:.3f},{status}\n")


if __name__ == "__main__":
    main()
