package cityref;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.PeerInfo;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.ProxyProtocolData;
import io.helidon.webserver.Router;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;

/**
 * What the HTTP layer does before the routing, where Helidon 4.4 differs from the spec's rule.
 *
 * <ul>
 * <li><b>HTTP/1.0 is served.</b> Helidon's HTTP/1 connection rejects it by design
 * ({@code Http1Prologue}: "HTTP 1.0 is not supported", 505 since helidon-io/helidon#9715), and
 * with more than one connection selector a 1.0 connection is closed without an answer
 * ({@code ConnectionHandler#identifyConnection}). This listener therefore has exactly one
 * selector: Helidon's own HTTP/1 selector, given a connection whose byte stream presents an
 * HTTP/1.0 request as the HTTP/1.1 request it is equivalent to: the version token rewritten, and
 * {@code Connection: close} added unless the client asked for keep-alive (1.0's default). A 1.1
 * connection's bytes pass through untouched after its first request line.</li>
 * <li><b>{@code Connection: close} closes the connection.</b> Helidon 4.4's HTTP/1 loop keeps
 * reading after a response that said {@code Connection: close} (fixed upstream after 4.4,
 * helidon-io/helidon#12324); {@link #closeWhenAsked()} ends the connection once the response is
 * sent, with Helidon's own {@link CloseConnectionException}.</li>
 * </ul>
 */
final class Wire {
    /** An HTTP/1.0 head (request line and header fields) longer than this is left to Helidon as is. */
    private static final int MAX_HEAD = 256 * 1024;

    private static final byte[] HTTP_1_0 = " HTTP/1.0\r".getBytes(StandardCharsets.US_ASCII);

    private Wire() {}

    /** The listener's only connection selector: Helidon's HTTP/1 selector, HTTP/1.0 included. */
    static ServerConnectionSelector selector(Http1Config http1) {
        Http1ConnectionSelector delegate =
                Http1ConnectionSelector.builder().config(http1).build();
        return new ServerConnectionSelector() {
            @Override
            public int bytesToIdentifyConnection() {
                return 0;
            }

            @Override
            public Support supports(BufferData data) {
                return Support.SUPPORTED;
            }

            @Override
            public Set<String> supportedApplicationProtocols() {
                return delegate.supportedApplicationProtocols();
            }

            @Override
            public ServerConnection connection(ConnectionContext ctx) {
                DataReader in = ctx.dataReader();
                Supplier<byte[]> raw = () -> {
                    try {
                        in.ensureAvailable();
                    } catch (DataReader.InsufficientDataAvailableException e) {
                        return null; // end of stream
                    }
                    return in.readBytes(in.available());
                };
                // An HTTP/1.0 request may lack Host, which HTTP/1.1 requires: the address it came to.
                String host = ctx.localPeer().host() + ":" + ctx.localPeer().port();
                return delegate.connection(new Context(ctx, DataReader.create(new Http10Stream(raw, host))));
            }
        };
    }

    /**
     * What the spec calls malformed and Helidon's parser accepts: a control byte in the request
     * target (prologue validation is off, as the contract judges paths and queries itself), a
     * {@code Content-Length} that is not one decimal number ({@code -1}), or one together with
     * {@code Transfer-Encoding}.
     */
    static boolean malformed(String target, io.helidon.http.Headers headers) {
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return true;
            }
        }
        if (!headers.contains(HeaderNames.CONTENT_LENGTH)) {
            return false;
        }
        java.util.List<String> lengths = headers.values(HeaderNames.CONTENT_LENGTH);
        return headers.contains(HeaderNames.TRANSFER_ENCODING)
                || lengths.size() != 1
                || !lengths.getFirst().chars().allMatch(ch -> ch >= '0' && ch <= '9')
                || lengths.getFirst().isEmpty();
    }

    /** The first filter: after a response to a request that asked for it, close the connection. */
    static Filter closeWhenAsked() {
        return (chain, req, res) -> {
            chain.proceed();
            boolean close = req.headers().values(HeaderNames.CONNECTION).stream()
                    .flatMap(v -> java.util.Arrays.stream(v.split(",")))
                    .anyMatch(token -> token.trim().equalsIgnoreCase("close"));
            if (close && res.isSent()) {
                throw new CloseConnectionException("the client asked for Connection: close");
            }
        };
    }

    /**
     * The bytes of one connection. Its first request line decides: HTTP/1.0 → every request head
     * is rewritten as HTTP/1.1 (bodies, framed by {@code Content-Length}, pass through); anything
     * else → the bytes pass through unchanged from then on.
     */
    static final class Http10Stream implements Supplier<byte[]> {
        private final Supplier<byte[]> raw;
        private final String host;
        private final ByteArrayOutputStream head = new ByteArrayOutputStream();
        private boolean decided;
        private boolean passThrough;
        private long bodyLeft;

        Http10Stream(Supplier<byte[]> raw, String host) {
            this.raw = raw;
            this.host = host;
        }

        @Override
        public byte[] get() {
            while (true) {
                byte[] in = raw.get();
                if (in == null) {
                    if (head.size() > 0) { // what is left of a head that never ended: Helidon's to judge
                        byte[] rest = head.toByteArray();
                        head.reset();
                        passThrough = true;
                        return rest;
                    }
                    return null;
                }
                if (passThrough) {
                    return in;
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + 32);
                int i = 0;
                while (i < in.length) {
                    if (passThrough) {
                        out.write(in, i, in.length - i);
                        break;
                    }
                    if (bodyLeft > 0) {
                        int n = (int) Math.min(bodyLeft, in.length - i);
                        out.write(in, i, n);
                        i += n;
                        bodyLeft -= n;
                        continue;
                    }
                    byte b = in[i++];
                    head.write(b);
                    if (b != '\n') {
                        if (head.size() > MAX_HEAD) {
                            passThrough = true;
                            out.writeBytes(head.toByteArray());
                            head.reset();
                        }
                        continue;
                    }
                    byte[] h = head.toByteArray();
                    if (!decided && h.length <= 2 && (h.length == 1 || h[0] == '\r')) {
                        head.reset(); // an empty line before the request line is ignored (RFC 9112, 2.2)
                        continue;
                    }
                    if (!decided) {
                        decided = true;
                        if (!endsWith(h, h.length - 1, HTTP_1_0)) { // not HTTP/1.0: nothing to do
                            passThrough = true;
                            out.writeBytes(h);
                            head.reset();
                        }
                    } else if (decided
                            && h.length >= 4
                            && h[h.length - 2] == '\r'
                            && h[h.length - 3] == '\n'
                            && h[h.length - 4] == '\r') {
                        out.writeBytes(rewrite(h));
                        head.reset();
                    }
                }
                if (out.size() > 0) {
                    return out.toByteArray();
                }
            }
        }

        private static boolean endsWith(byte[] h, int end, byte[] suffix) {
            if (end < suffix.length) {
                return false;
            }
            for (int k = 0; k < suffix.length; k++) {
                if (h[end - suffix.length + k] != suffix[k]) {
                    return false;
                }
            }
            return true;
        }

        /** One complete head: the version token as 1.1, Connection: close unless keep-alive was asked. */
        private byte[] rewrite(byte[] h) {
            String text = new String(h, StandardCharsets.ISO_8859_1);
            while (text.startsWith("\r\n")) { // empty lines before a request line are ignored (RFC 9112, 2.2)
                text = text.substring(2);
            }
            int lineEnd = text.indexOf("\r\n");
            String line = text.substring(0, lineEnd);
            if (!line.endsWith(" HTTP/1.0")) {
                return h; // a different version later on the connection: Helidon's to judge
            }
            boolean keepAlive = false;
            boolean hasHost = false;
            String fields = text.substring(lineEnd + 2, text.length() - 2); // each ends with CRLF
            for (String field : fields.split("\r\n")) {
                int colon = field.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String name = field.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = field.substring(colon + 1).trim().toLowerCase(Locale.ROOT);
                hasHost |= name.equals("host");
                if (name.equals("connection")) {
                    for (String token : value.split(",")) {
                        keepAlive |= token.trim().equals("keep-alive");
                    }
                } else if (name.equals("content-length")) {
                    try {
                        bodyLeft = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        passThrough = true; // Helidon answers the malformed Content-Length
                    }
                } else if (name.equals("transfer-encoding")) {
                    passThrough = true; // no framing to follow: Helidon reads (or rejects) the rest
                }
            }
            String rewritten = line.substring(0, line.length() - "1.0".length()) + "1.1\r\n"
                    + fields
                    + (hasHost ? "" : "Host: " + host + "\r\n") // optional in 1.0, required in 1.1
                    + (keepAlive ? "" : "Connection: close\r\n") + "\r\n";
            return rewritten.getBytes(StandardCharsets.ISO_8859_1);
        }
    }

    /** The connection's context with another data reader; everything else is Helidon's. */
    private record Context(ConnectionContext delegate, DataReader reader) implements ConnectionContext {
        @Override
        public DataReader dataReader() {
            return reader;
        }

        @Override
        public ListenerContext listenerContext() {
            return delegate.listenerContext();
        }

        @Override
        public ExecutorService executor() {
            return delegate.executor();
        }

        @Override
        public DataWriter dataWriter() {
            return delegate.dataWriter();
        }

        @Override
        public Router router() {
            return delegate.router();
        }

        @Override
        public Optional<ProxyProtocolData> proxyProtocolData() {
            return delegate.proxyProtocolData();
        }

        @Override
        public io.helidon.common.socket.HelidonSocket serverSocket() {
            return delegate.serverSocket();
        }

        @Override
        public PeerInfo remotePeer() {
            return delegate.remotePeer();
        }

        @Override
        public PeerInfo localPeer() {
            return delegate.localPeer();
        }

        @Override
        public boolean isSecure() {
            return delegate.isSecure();
        }

        @Override
        public String socketId() {
            return delegate.socketId();
        }

        @Override
        public String childSocketId() {
            return delegate.childSocketId();
        }
    }
}
