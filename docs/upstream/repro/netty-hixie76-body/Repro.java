// Netty alone: HttpServerCodec and one handler that answers every request with its method, target and
// the body bytes Netty handed over. Run by repro.sh:
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
        System.out.println("listening on " + port);
    }

    /** Answers "<method> <target> body=<the body bytes as received>" once the request has ended. */
    static final class Echo extends SimpleChannelInboundHandler<HttpObject> {
        private String request;
        private final StringBuilder body = new StringBuilder();

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (msg.decoderResult().isFailure()) {
                FullHttpResponse bad = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST);
                bad.headers().set("Content-Length", 0).set("Connection", "close");
                ctx.writeAndFlush(bad).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            if (msg instanceof HttpRequest req) {
                request = req.method() + " " + req.uri();
                body.setLength(0);
            }
            if (msg instanceof HttpContent content) {
                body.append(content.content().toString(StandardCharsets.ISO_8859_1));
            }
            if (msg instanceof LastHttpContent) {
                ByteBuf text = Unpooled.copiedBuffer(request + " body=" + body.toString().replace("\r\n", "\\r\\n") + "\n",
                        StandardCharsets.ISO_8859_1);
                FullHttpResponse ok = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, text);
                ok.headers().set("Content-Type", "text/plain").set("Content-Length", text.readableBytes());
                ctx.writeAndFlush(ok);
            }
        }
    }
}
