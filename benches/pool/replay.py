#!/usr/bin/env python3
"""Replays a sweep's jobs through the pool's hand-out rule (src/run/pool.rs) on N workers and
prints the speedup over one, taking each job's cost as its events in runs.csv.

What it bounds is what the hand-out rule itself costs on many cores: batches of consecutive
jobs, a worker starting a batch only while it ends within the window of the oldest run not yet
handed on, and runs handed on in job order. The machine (clock speed with every core busy,
shared caches, memory bandwidth) and the fixed cost of a run (reading the config, writing the
files and charts) are not in it: `retrysim run CONFIG --set workload.tasks=1` measures the
second. Usage: benches/pool/replay.py out/duplicate-curve/runs.csv [workers ...]
"""

import csv
import heapq
import sys

# As in src/run/pool.rs.
AHEAD_PER_WORKER = 4
MOST_IN_A_BATCH = 16


def batch(total, workers):
    return max(1, min(MOST_IN_A_BATCH, total // (workers * 16)))


def makespan(costs, workers):
    """When the last job ends, jobs taken as the pool takes them."""
    total = len(costs)
    size = batch(total, workers)
    ahead = workers * max(AHEAD_PER_WORKER, 2 * size)
    finish = [0.0] * total
    # done_by[k]: when jobs 0..k-1 have all ended, so the k-th is handed on (in order).
    done_by = [0.0] * (total + 1)
    free = [(0.0, w) for w in range(workers)]
    heapq.heapify(free)
    first = 0
    while first < total:
        t, w = heapq.heappop(free)
        end = min(first + size, total)
        # Every job before `first` is already given out, so when it ends is known.
        t = max(t, done_by[max(0, end - ahead)])
        for k in range(first, end):
            t += costs[k]
            finish[k] = t
        # A batch's runs are sent on together when its last ends.
        for k in range(first, end):
            done_by[k + 1] = max(done_by[k], t)
        heapq.heappush(free, (t, w))
        first = end
    return max(finish)


def main():
    path = sys.argv[1]
    workers = [int(w) for w in sys.argv[2:]] or [2, 4, 8, 16]
    with open(path, newline="") as f:
        costs = [float(row["events"]) for row in csv.DictReader(f)]
    one = sum(costs)
    for n in workers:
        print(f"{path}: {len(costs)} jobs, {n:2} workers, batch {batch(len(costs), n):2}: "
              f"{one / makespan(costs, n):5.2f}× one worker")


if __name__ == "__main__":
    main()
