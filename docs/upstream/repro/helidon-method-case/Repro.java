// Helidon SE WebServer alone: GET /hello -> "hello"; HEAD /hello -> the same headers without the body,
// as an application must send it (Helidon leaves HEAD to the application). The HEAD route also logs the
// method token Helidon hands over. Run by repro.sh:
//   java -cp '<helidon-webserver 4.4.0 and its dependencies>/*' Repro.java <port>
import io.helidon.http.HeaderNames;
import io.helidon.webserver.WebServer;

public class Repro {
    public static void main(String[] args) {
        WebServer started = WebServer.builder()
                .host("127.0.0.1")
                .port(Integer.parseInt(args[0]))
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
