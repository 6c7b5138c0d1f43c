#!/usr/bin/env python3
"""A stand-in kubelet (and NodeManager, and the API server's NodeSLOs) for
tests/unit/test_kubelet.c and the daemon's tests: HTTPS on loopback (plain HTTP
when CERT is "-"), recorded answers.

    kubelet_server.py CERT KEY TOKEN DATA_DIR PORT_FILE [NODESLO_DIR]

/pods        data/podlist.json (needs "Authorization: Bearer TOKEN", else 401)
/pods-changing  the same, one more trailing space at each request: every answer differs
/malformed   a PodList cut short
/huge        70 MiB (more than the client takes), with a Content-Length
/huge-chunked  the same, chunked
/slow        answers after 3 s
/error       500
/ws/v1/node/containers  data/nm-containers.json (NodeManager; no token)
/apis/slo.koordinator.sh/v1alpha1/nodeslos/NAME  NODESLO_DIR/NAME.json as it is at the request
             (404 when absent); the token is needed over HTTPS and refused (400) over
             plain HTTP, where it would travel in clear
/api/v1/nodes/NAME  NODESLO_DIR/nodes/NAME.json, the same way
POST /api/v1/namespaces/NS/pods/NAME/eviction  the Eviction API: each request's path and body
             appended as a JSON line to NODESLO_DIR/evictions, answered with the status in
             NODESLO_DIR/eviction-status (201 when absent; 429 with a PodDisruptionBudget's
             message); the token as for NodeSLOs
The chosen port is written to PORT_FILE once it listens.
"""
import http.server
import json
import os
import ssl
import sys
import time

cert, key, token, data, port_file = sys.argv[1:6]
nodeslo_dir = sys.argv[6] if len(sys.argv) > 6 else None
NODESLOS = '/apis/slo.koordinator.sh/v1alpha1/nodeslos/'
NODES = '/api/v1/nodes/'


class Handler(http.server.BaseHTTPRequestHandler):
    changes = 0

    def log_message(self, *args):
        pass

    def send(self, code, body):
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        parts = self.path.split('/')
        if not nodeslo_dir or len(parts) != 8 or parts[1:4] != ['api', 'v1', 'namespaces'] or \
                parts[5] != 'pods' or parts[7] != 'eviction':
            return self.send(404, b'{"kind": "Status", "code": 404}')
        if not self.authorized():
            return
        with open(os.path.join(nodeslo_dir, 'evictions'), 'a') as f:
            f.write(json.dumps({'path': self.path, 'body': json.loads(body),
                                'content_type': self.headers.get('Content-Type')}) + '\n')
        try:
            code = int(open(os.path.join(nodeslo_dir, 'eviction-status')).read())
        except FileNotFoundError:
            code = 201
        message = {201: 'Success', 429: "Cannot evict pod as it would violate the pod's "
                   'disruption budget.'}.get(code, 'refused')
        return self.send(code, json.dumps({'kind': 'Status', 'apiVersion': 'v1', 'code': code,
                                           'message': message}).encode())

    def authorized(self):
        auth = self.headers.get('Authorization')
        if cert == '-' and auth is not None:
            self.send(400, b'{"kind": "Status", "message": "a token over plain HTTP"}')
            return False
        if cert != '-' and auth != 'Bearer ' + token:
            self.send(401, b'{"kind": "Status", "code": 401}')
            return False
        return True

    def do_GET(self):
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass   # the client gave up, as it should on /huge

    def nodeslo(self, prefix=NODESLOS, subdir=''):
        if not self.authorized():
            return
        name = self.path[len(prefix):]
        try:
            body = open(os.path.join(nodeslo_dir, subdir, os.path.basename(name) + '.json'), 'rb').read()
        except FileNotFoundError:
            return self.send(404, b'{"kind": "Status", "code": 404}')
        return self.send(200, body)

    def answer(self):
        if nodeslo_dir and self.path.startswith(NODESLOS):
            return self.nodeslo()
        if nodeslo_dir and self.path.startswith(NODES):
            return self.nodeslo(NODES, 'nodes')
        if self.path == '/pods':
            if self.headers.get('Authorization') != 'Bearer ' + token:
                return self.send(401, b'{"kind": "Status", "code": 401}')
            return self.send(200, open(os.path.join(data, 'podlist.json'), 'rb').read())
        if self.path == '/pods-changing':
            Handler.changes += 1
            body = open(os.path.join(data, 'podlist.json'), 'rb').read()
            return self.send(200, body + b' ' * Handler.changes)
        if self.path == '/ws/v1/node/containers':   # YARN NodeManager: no token
            return self.send(200, open(os.path.join(data, 'nm-containers.json'), 'rb').read())
        if self.path == '/ws/v1/node/containers-none':
            return self.send(200, b'{"containers": null}')
        if self.path == '/malformed':
            return self.send(200, open(os.path.join(data, 'podlist.json'), 'rb').read()[:700])
        if self.path == '/huge':
            chunk = b' ' * (1 << 20)
            self.send_response(200)
            self.send_header('Content-Length', str(70 << 20))
            self.end_headers()
            for _ in range(70):
                self.wfile.write(chunk)
            return
        if self.path == '/huge-chunked':
            chunk = b' ' * (1 << 20)
            self.send_response(200)
            self.send_header('Transfer-Encoding', 'chunked')
            self.end_headers()
            for _ in range(70):
                self.wfile.write(b'%x\r\n%s\r\n' % (len(chunk), chunk))
            self.wfile.write(b'0\r\n\r\n')
            return
        if self.path == '/slow':
            time.sleep(3)
            return self.send(200, b'{"items": []}')
        return self.send(500, b'{}')


srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
if cert != '-':
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(port_file + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + '.tmp', port_file)
srv.serve_forever()
