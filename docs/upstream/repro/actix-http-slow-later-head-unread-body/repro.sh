#!/bin/sh
# Builds the actix-web hello world of ../actix-http-pipelined-codec-state (actix-web 4.18.1 / actix-http
# 3.20.0, HttpServer's defaults: client_request_timeout 5 s, keep-alive 5 s, client_disconnect_timeout
# 1 s) and runs ../slow-clients against GET /fast: a 64 MiB body the handler never reads, with
# Content-Length and then chunked; then, all at once, a trickled head (a byte every 2 s), a trickled head
# after one complete request, a request line alone and an idle kept-alive connection, each watched for
# 40 s. Takes about a minute after the build.
#   docs/upstream/repro/actix-http-slow-later-head-unread-body/repro.sh
# Needs cargo and python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
server=$here/../actix-http-pipelined-codec-state
client=$here/../slow-clients/client.py
port=${PORT:-18925}
(cd "$server" && cargo build --locked --quiet)
grep -A1 '^name = "actix-http"$' "$server/Cargo.lock" | tr '\n' ' '; echo

PORT=$port "$server/target/debug/actix-pipelined-codec-state" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the server did not start")
PY
echo "== a 64 MiB body to GET /fast, which never reads it"
python3 "$client" "$port" body /fast
echo "== the same 64 MiB as a chunked body"
python3 "$client" "$port" body-chunked /fast
echo "== slow heads, all at once, each watched 40 s"
python3 "$client" "$port" trickle-head,trickle-after-request,silent,idle-after-request /fast
