#!/usr/bin/env python3
"""Writes synthetic-trace.jsonl: ten minutes of a client's calls to two operations, as the
OpenTelemetry collector's file exporter writes a trace (one OTLP JSON object per line, a
second of spans per line), with true parameters stated below so that `retrysim calibrate` can
be held against them.

    python3 configs/data/synthetic-trace.py > configs/data/synthetic-trace.jsonl

The client is instrumented as the HTTP semantic conventions say: a CLIENT span per attempt
with `http.response.status_code`, `http.response.header.retry-after` on a 429, and
`http.request.resend_count` on a resend; a call that times out has no status code, status
ERROR and `error.type = "timeout"`. The client resends once after a 5xx, a 429 or a timeout.
One call in ten also has the server's own span (SERVER), which calibrate reads past.
Standard library only; the same bytes on every run.
"""

import json
import math
import random
import sys

SEED = 20261130
START_NS = 1_796_040_000 * 10**9  # 2026-11-30T12:00:00Z
SECONDS = 600
TIMEOUT_S = 2.0

# The true parameters: first attempts per second by time, a lognormal round trip (median,
# sigma), and the share of attempts ending in each way.
OPERATIONS = {
    "POST /v1/charges": {
        "rate": lambda t: 8.0 if 300 <= t < 450 else 4.0,
        "median_s": 0.120,
        "sigma": 0.6,
        "5xx": 0.03,
        "429": 0.02,
        "403": 0.005,
        "4xx": 0.01,
        "timeout": 0.015,
        "retry_after_s": 2,
    },
    "GET /v1/search": {
        "rate": lambda t: 2.0,
        "median_s": 0.040,
        "sigma": 0.4,
        "5xx": 0.01,
        "429": 0.0,
        "403": 0.0,
        "4xx": 0.0,
        "timeout": 0.0,
        "retry_after_s": 0,
    },
}


def attempt(rng, op, start_s, resend):
    """One attempt's span (and its outcome), starting start_s seconds into the trace."""
    p = OPERATIONS[op]
    u = rng.random()
    latency = p["median_s"] * math.exp(p["sigma"] * rng.gauss(0.0, 1.0))
    outcome = "ok"
    for name in ("5xx", "429", "403", "4xx", "timeout"):
        if u < p[name]:
            outcome = name
            break
        u -= p[name]
    if latency >= TIMEOUT_S:
        outcome = "timeout"
    attributes = [{"key": "http.request.method", "value": {"stringValue": op.split()[0]}}]
    status = {}
    if outcome == "timeout":
        latency = TIMEOUT_S
        attributes.append({"key": "error.type", "value": {"stringValue": "timeout"}})
        status = {"code": 2}
    else:
        code = {"ok": 200, "5xx": rng.choice([500, 502, 503]), "429": 429, "403": 403,
                "4xx": 400}[outcome]
        attributes.append({"key": "http.response.status_code", "value": {"intValue": str(code)}})
        if outcome == "429":
            attributes.append({"key": "http.response.header.retry-after",
                               "value": {"arrayValue": {"values": [
                                   {"stringValue": str(p["retry_after_s"])}]}}})
        if code >= 500:
            status = {"code": 2}
    if resend:
        attributes.append({"key": "http.request.resend_count", "value": {"intValue": "1"}})
    begin = START_NS + round(start_s * 1e9)
    span = {
        "traceId": "%032x" % rng.getrandbits(128),
        "spanId": "%016x" % rng.getrandbits(64),
        "name": op,
        "kind": 3,
        "startTimeUnixNano": str(begin),
        "endTimeUnixNano": str(begin + round(latency * 1e9)),
        "attributes": attributes,
        "status": status,
    }
    return span, outcome, latency


def main():
    rng = random.Random(SEED)
    by_second = [[] for _ in range(SECONDS + 10)]
    for op, p in OPERATIONS.items():
        t = 0.0
        while True:
            t += rng.expovariate(p["rate"](t))
            if t >= SECONDS:
                break
            span, outcome, latency = attempt(rng, op, t, resend=False)
            by_second[int(t)].append(span)
            if rng.random() < 0.1:
                server = dict(span, kind=2, spanId="%016x" % rng.getrandbits(64))
                by_second[int(t)].append(server)
            if outcome in ("5xx", "429", "timeout"):
                wait = p["retry_after_s"] if outcome == "429" else 0.1
                again = t + latency + wait
                resent, _, _ = attempt(rng, op, again, resend=True)
                by_second[int(again)].append(resent)
    out = sys.stdout
    for spans in by_second:
        if not spans:
            continue
        line = {"resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name",
                                         "value": {"stringValue": "agent"}}]},
            "scopeSpans": [{"scope": {"name": "synthetic-client"}, "spans": spans}],
        }]}
        out.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
