/*
 * Jetty 12 core alone (no servlet layer, no http4k): a ServerConnector with Jetty's defaults (idle
 * timeout 30 s) and one Handler that answers every request with 200 "hello" without reading its body.
 * Run by repro.sh:
 *
 *   java -cp '<Jetty 12 jars and slf4j-api>/*' Repro.java <port>
 */

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

public class Repro {
    public static void main(String[] args) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(Integer.parseInt(args[0]));
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
                response.write(true, ByteBuffer.wrap("hello".getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        server.start();
        System.out.println("listening on " + connector.getLocalPort() + ", idle timeout " + connector.getIdleTimeout() + " ms");
        server.join();
    }
}
