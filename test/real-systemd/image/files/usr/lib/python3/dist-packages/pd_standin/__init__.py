"""Stand-ins for the SGLang server and router inside the real-systemd test container.

GPUs and SGLang cannot run on the test machines, so these processes take their place: they are started by real
systemd units with SGLang's own command-line shape (`python3 -m sglang.launch_server ...`,
`python3 -m sglang_router.launch_router ...`), log what SGLang logs at start-up the way it reaches journald (one
stderr stream, real tqdm bars drawn as SGLang draws them), listen only once "loaded", and answer HTTP by relaying to
PD Console's demo simulation running in the test process, so every byte a client reads is the demo's emulation
of the real formats. Behaviour per unit (load time, failures) comes from /etc/pd-sim/units.json, the relay
targets from /etc/pd-sim/upstream.json; both are written by the test fixture.
"""

import http.server
import json
import os
import socketserver
import sys
import time
import urllib.error
import urllib.request

CONFIG_DIR = "/etc/pd-sim"


def unit_name():
    """The systemd unit this process runs in, from its cgroup (what systemd itself uses)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                path = line.rstrip("\n").split(":", 2)[-1]
                for part in reversed(path.split("/")):
                    if part.endswith(".service"):
                        return part
    except OSError:
        pass
    return ""


def load_json(name):
    try:
        with open(os.path.join(CONFIG_DIR, name), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def unit_behaviour():
    return load_json("units.json").get(unit_name(), {})


def upstream():
    return load_json("upstream.json")


def asctime():
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())


def log(msg, rank=None):
    """SGLang's logger format on stderr: "[2026-12-06 07:05:44 TP0] msg"."""
    who = f" TP{rank}" if rank is not None else ""
    sys.stderr.write(f"[{asctime()}{who}] {msg}\n")
    sys.stderr.flush()


def raw(text):
    sys.stderr.write(text)
    sys.stderr.flush()


def raw_bytes(data):
    sys.stderr.flush()
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def relay_server(host, port, target, rewrite, local):
    """An HTTP server on host:port relaying every request to `target` (the demo simulation's endpoint),
    replacing the simulation's own URLs in the answer by this container's (`rewrite`). `local(handler)`
    may answer a request itself and return True."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            # uvicorn's access log line, as SGLang's server writes it.
            client = f"{self.client_address[0]}:{self.client_address[1]}"
            code = args[1] if len(args) > 1 else "-"
            line = f'INFO:     {client} - "{self.command} {self.path} HTTP/1.1" {code}'
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

        def answer(self, status, body, ctype):
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def relay(self):
            if local(self):
                return
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            req = urllib.request.Request(target + self.path, data=body, method=self.command)
            for k in ("content-type", "accept", "authorization"):
                if self.headers.get(k):
                    req.add_header(k, self.headers[k])
            try:
                with urllib.request.urlopen(req, timeout=20) as res:
                    status, data, ctype = res.status, res.read(), res.headers.get("content-type", "")
            except urllib.error.HTTPError as e:
                status, data, ctype = e.code, e.read(), e.headers.get("content-type", "")
            except OSError as e:
                status, data, ctype = 502, f"relay to the simulation failed: {e}".encode(), "text/plain"
            for old, new in rewrite.items():
                data = data.replace(old.encode(), new.encode())
            self.answer(status, data, ctype or "application/octet-stream")

        do_GET = relay
        do_POST = relay
        do_HEAD = relay

    srv = ThreadingServer((host, port), Handler)
    return srv
