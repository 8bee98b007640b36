// Helidon SE WebServer alone, one route: GET /hello -> "hello". Run by repro.sh:
//   java -cp '<helidon-webserver 4.4.0 and its dependencies>/*' Repro.java <port> [discovered|configured]
// discovered: the listener's HTTP/1 protocol as service discovery provides it (one connection selector).
// configured: an HTTP/1 protocol configuration added in code, as an application sets any HTTP/1 limit;
//             the listener then has two HTTP/1 connection selectors (this one and the discovered one).
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http1.Http1Config;

public class Repro {
    public static void main(String[] args) {
        WebServerConfig.Builder server = WebServer.builder().host("127.0.0.1").port(Integer.parseInt(args[0]));
        if (args.length > 1 && args[1].equals("configured")) {
            server.addProtocol(Http1Config.builder().maxPrologueLength(8192).build());
        }
        WebServer started = server.routing(r -> r.get("/hello", (req, res) -> res.send("hello")))
                .build()
                .start();
        System.out.println("listening on " + started.port());
    }
}
