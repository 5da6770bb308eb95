"""A stand-in Kubernetes API server for the signaller's tests.

    apiserver.py DIR REGISTERED_FROM

Serves HTTPS on 127.0.0.1 (an ephemeral port, printed on the first line of
stdout) with DIR/cert.pem and DIR/key.pem. It answers GET /api/v1/nodes/NAME
with 200 and the Node from the REGISTERED_FROM-th such request on (0: never,
404 until then), and 401 to a request without a bearer token. Every request is
appended to DIR/api.log as "PATH TOKEN".
"""

import http.server
import json
import ssl
import sys

DIR = sys.argv[1]
REGISTERED_FROM = int(sys.argv[2])


class Handler(http.server.BaseHTTPRequestHandler):
    reads = 0

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else "-"
        with open(f"{DIR}/api.log", "a", encoding="utf-8") as log:
            log.write(f"{self.path} {token}\n")
        name = self.path.removeprefix("/api/v1/nodes/")
        if token == "-":
            self.answer(401, {"kind": "Status", "code": 401})
        elif name == self.path or "/" in name:
            self.answer(404, {"kind": "Status", "code": 404})
        else:
            Handler.reads += 1
            if REGISTERED_FROM and Handler.reads >= REGISTERED_FROM:
                self.answer(200, {"kind": "Node", "metadata": {"name": name}})
            else:
                self.answer(404, {"kind": "Status", "reason": "NotFound", "code": 404})

    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(f"{DIR}/cert.pem", f"{DIR}/key.pem")
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
