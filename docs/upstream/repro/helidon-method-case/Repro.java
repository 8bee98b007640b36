// Helidon SE WebServer alone: GET /hello -> "hello"; HEAD /hello -> the same headers without the body,
// as an application must send it (Helidon leaves HEAD to the application). The HEAD route also logs the
// method token Helidon hands over. Run by repro.sh (and by ../helidon-slow-header-section/repro.sh, which
// passes an idle-connection-timeout, checked every second, as a second argument):
//   java -cp '<helidon-webserver 4.4.0 and its dependencies>/*' Repro.java <port> [<idle timeout, e.g. PT5S>]
import io.helidon.http.HeaderNames;
import io.helidon.webserver.WebServer;
import java.time.Duration;

public class Repro {
    public static void main(String[] args) {
        var builder = WebServer.builder()
                .host("127.0.0.1")
                .port(Integer.parseInt(args[0]));
        if (args.length > 1) {
            builder.idleConnectionTimeout(Duration.parse(args[1])).idleConnectionPeriod(Duration.ofSeconds(1));
        }
        WebServer started = builder
                .routing(r -> r.get("/hello", (req, res) -> res.send("hello"))
                        .head("/hello", (req, res) -> {
                            System.out.println("HEAD route, method token: " + req.prologue().method().text());
                            res.header(HeaderNames.CONTENT_LENGTH, "5");
                            res.send();
                        }))
                .build()
                .start();
        System.out.println("listening on " + started.port());
    }
}
