"""Charges orders at `retrysim endpoint configs/endpoint-demo.toml` the way three clients do.

    python clients/charge.py URL CLIENT [ORDERS]

CLIENT is `urllib3` (requests with urllib3's Retry told to retry POSTs), `tenacity` (a plain
POST wrapped in @retry) or `tenacity-keyed` (the same, with an Idempotency-Key per order). Each
order's id is in the body, so the endpoint counts every charge of one order.
"""

import sys

import requests
from requests.adapters import HTTPAdapter
from tenacity import retry, stop_after_attempt
from urllib3.util.retry import Retry


def session(client):
    s = requests.Session()
    s.headers["X-Client"] = client
    if client == "urllib3":
        retries = Retry(total=2, allowed_methods=["POST"], status_forcelist=[502, 503, 504],
                        backoff_factor=0, raise_on_status=False)
        s.mount("http://", HTTPAdapter(max_retries=retries))
    return s


@retry(stop=stop_after_attempt(3), reraise=True)
def charge_with_tenacity(s, url, order, keyed):
    headers = {"Idempotency-Key": f"order-{order}"} if keyed else {}
    s.post(url, json={"order_id": order, "amount": 15}, headers=headers, timeout=10).raise_for_status()


def main():
    url, client = sys.argv[1].rstrip("/") + "/charge", sys.argv[2]
    orders = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    s, failed = session(client), 0
    for order in range(orders):
        try:
            if client == "urllib3":
                s.post(url, json={"order_id": order, "amount": 15}, timeout=10).raise_for_status()
            else:
                charge_with_tenacity(s, url, order, keyed=client == "tenacity-keyed")
        except requests.RequestException:
            failed += 1
    print(f"{client}: {orders} orders, {failed} failed as far as the client knows")


if __name__ == "__main__":
    main()
