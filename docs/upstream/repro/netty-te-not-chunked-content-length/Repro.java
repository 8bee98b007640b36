// Netty alone: HttpServerCodec and one handler that logs every request the decoder hands over (method,
// target, its Content-Length and Transfer-Encoding fields, the body bytes it received) and answers it:
// 404 for /smuggled, 200 for anything else, 400 and a close for a decoder failure (a line the decoder cannot
// read as a request line comes as Netty's placeholder request, GET /bad-request). Run by repro.sh:
//   java -cp '<Netty 4.2 jars>/*' Repro.java <port>
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;

public class Repro {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        new ServerBootstrap()
                .group(new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()))
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new Echo());
                    }
                })
                .bind("127.0.0.1", port)
                .sync();
        log("listening on " + port);
    }

    static void log(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** "<method> <target>: <n> body bytes "<bytes>"", once the request has ended; 404 for /smuggled. */
    static final class Echo extends SimpleChannelInboundHandler<HttpObject> {
        private HttpRequest request;
        private final StringBuilder body = new StringBuilder();

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (msg.decoderResult().isFailure()) {
                Throwable cause = msg.decoderResult().cause();
                String on = msg instanceof HttpRequest failed ? " on " + failed.method() + " " + failed.uri() : "";
                log("decoder failure" + on + ": " + cause.getClass().getSimpleName() + ": " + cause.getMessage()
                        + " (answered 400, closed)");
                FullHttpResponse bad = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST);
                bad.headers().set("Content-Length", 0).set("Connection", "close");
                ctx.writeAndFlush(bad).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            if (msg instanceof HttpRequest req) {
                request = req;
                body.setLength(0);
            }
            if (msg instanceof HttpContent content) {
                body.append(content.content().toString(StandardCharsets.ISO_8859_1));
            }
            if (msg instanceof LastHttpContent) {
                String seen = request.method() + " " + request.uri() + ": " + body.length() + " body bytes"
                        + (body.length() > 0 ? " \"" + escape(body) + "\"" : "");
                log("decoded " + seen + " (" + framing(request) + ")");
                HttpResponseStatus status = request.uri().equals("/smuggled") ? HttpResponseStatus.NOT_FOUND
                        : HttpResponseStatus.OK;
                ByteBuf text = Unpooled.copiedBuffer(seen + "\n", StandardCharsets.ISO_8859_1);
                FullHttpResponse answer = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, text);
                answer.headers().set("Content-Type", "text/plain").set("Content-Length", text.readableBytes());
                ctx.writeAndFlush(answer);
            }
        }

        /** The request's framing fields as the decoder left them. */
        private static String framing(HttpRequest req) {
            String cl = String.join(", ", req.headers().getAll("Content-Length"));
            String te = String.join(", ", req.headers().getAll("Transfer-Encoding"));
            if (cl.isEmpty() && te.isEmpty()) {
                return "no Content-Length, no Transfer-Encoding";
            }
            return (cl.isEmpty() ? "no Content-Length" : "Content-Length: " + cl) + ", "
                    + (te.isEmpty() ? "no Transfer-Encoding" : "Transfer-Encoding: " + te);
        }

        private static String escape(CharSequence bytes) {
            return bytes.toString().replace("\r", "\\r").replace("\n", "\\n");
        }
    }
}
