"""`python3 -m sglang_router.launch_router --pd-disaggregation ...` in the real-systemd test container: the
router's command line, start-up log and HTTP surface (API and Prometheus ports), served by relaying to the demo
simulation's router (see pd_standin)."""

import argparse
import datetime
import sys
import threading

from pd_standin import relay_server, unit_behaviour, upstream


def tracing(level, target, msg):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    sys.stdout.write(f"{now} {level:>5} {target}: {msg}\n")
    sys.stdout.flush()


def parse():
    p = argparse.ArgumentParser(prog="sglang_router.launch_router", allow_abbrev=False)
    p.add_argument("--pd-disaggregation", action="store_true")
    p.add_argument("--prefill", nargs="+", action="append", default=[])
    p.add_argument("--decode", action="append", default=[])
    p.add_argument("--worker-urls", nargs="*", default=[])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--prometheus-host", default="127.0.0.1")
    p.add_argument("--prometheus-port", type=int, default=29000)
    p.add_argument("--policy", default="cache_aware")
    args, _unknown = p.parse_known_args()
    return args


def main():
    a = parse()
    unit_behaviour()
    up = upstream()
    prefill = ", ".join(
        f'("{w[0]}", {"Some(" + w[1] + ")" if len(w) > 1 else "None"})' for w in a.prefill
    )
    decode = ", ".join(f'"{u}"' for u in a.decode)
    target = "sglang_router_rs::server"
    tracing("INFO", target,
            f"Starting router on {a.host}:{a.port} | mode: PrefillDecode {{ prefill_urls: [{prefill}], "
            f"decode_urls: [{decode}] }} | policy: CacheAware | max_payload: 512MB")
    never = lambda h: False
    rewrite = up.get("rewrite", {})
    metrics = relay_server(a.prometheus_host, a.prometheus_port, up.get("router_metrics", ""), rewrite, never)
    tracing("INFO", "sglang_router_rs::metrics",
            f"Starting prometheus exporter on {a.prometheus_host}:{a.prometheus_port}")
    threading.Thread(target=metrics.serve_forever, daemon=True).start()
    api = relay_server(a.host, a.port, up.get("router_api", ""), rewrite, never)
    n = len(a.prefill) + len(a.decode)
    tracing("INFO", target, f"Waiting for {n} workers to become healthy (timeout: 1800s)")
    api.serve_forever()


if __name__ == "__main__":
    main()
