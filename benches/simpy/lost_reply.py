"""The lost-reply workload as a SimPy user would model it, to measure retrysim against.

Every client works through its share of the intents one after another. An attempt is a request
leg of 10 ms; the request is lost with probability a (no effect), otherwise the server commits
(one effect; with an idempotency key a key already seen adds none) and the reply is lost with
probability b. A reply leg of 10 ms later the client either has its reply or sees a reset, and
retries at once, with no cap and no backoff. `lost-reply.toml` beside this file is the same
workload in retrysim; both run it twice, without a key and with a per-intent key.

    python3 lost_reply.py [INTENTS]
"""

import random
import sys

import simpy

REQUEST_LOSS, REPLY_LOSS = 0.1, 0.2
LEG_S = 0.010
CLIENTS = 100


def simulate(intents, keyed, seed):
    env = simpy.Environment()
    draw = random.Random(seed).random
    counts = {"attempts": 0, "effects": 0}

    def client(share):
        for _ in range(share):
            committed = False
            while True:
                counts["attempts"] += 1
                yield env.timeout(LEG_S)
                u = draw()
                if u >= REQUEST_LOSS:
                    if not (keyed and committed):
                        counts["effects"] += 1
                    committed = True
                yield env.timeout(LEG_S)
                if u >= REQUEST_LOSS + REPLY_LOSS:
                    break

    for _ in range(CLIENTS):
        env.process(client(intents // CLIENTS))
    env.run()
    return intents // CLIENTS * CLIENTS, counts


def main():
    intents = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    for keyed in (False, True):
        n, counts = simulate(intents, keyed, 42)
        print(
            f"key={keyed} intents={n} attempts/intent={counts['attempts'] / n:.4f} "
            f"duplicates/intent={(counts['effects'] - n) / n:.4f}"
        )


if __name__ == "__main__":
    main()
