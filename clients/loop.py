"""A retry loop of your own, with nothing but Python's standard library.

    python clients/loop.py URL CLIENT [ORDERS] [--key]

Charges ORDERS orders (default 300) at `retrysim endpoint configs/endpoint-demo.toml`, each up to
three times: again after a dropped connection or a 502, 503 or 504, waiting 10 ms, then 20 ms.
With --key, each order carries an Idempotency-Key of its own. CLIENT names it in `X-Client`.
"""

import json
import sys
import time
import urllib.error
import urllib.request


def charge(url, client, order, key):
    body = json.dumps({"order_id": order, "amount": 15}).encode()
    headers = {"Content-Type": "application/json", "X-Client": client}
    if key:
        headers["Idempotency-Key"] = f"order-{order}"
    for attempt in range(3):
        if attempt > 0:
            time.sleep(0.010 * 2 ** (attempt - 1))
        try:
            with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code not in (502, 503, 504):
                raise
        except (ConnectionError, urllib.error.URLError):
            pass  # the connection dropped: was the order charged? The loop cannot know.
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--key"]
    url, client = args[0].rstrip("/") + "/charge", args[1]
    orders = int(args[2]) if len(args) > 2 else 300
    failed = sum(charge(url, client, order, "--key" in sys.argv) is None for order in range(orders))
    print(f"{client}: {orders} orders, {failed} failed as far as the client knows")


if __name__ == "__main__":
    main()
