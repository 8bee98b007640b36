// Helidon SE WebServer alone, one route: GET /hello -> "hello". Run by repro.sh:
//   java -cp '<helidon-webserver 4.4.0 and its dependencies>/*' Repro.java <port>
import io.helidon.webserver.WebServer;

public class Repro {
    public static void main(String[] args) {
        WebServer started = WebServer.builder()
                .host("127.0.0.1")
                .port(Integer.parseInt(args[0]))
                .routing(r -> r.get("/hello", (req, res) -> res.send("hello")))
                .build()
                .start();
        System.out.println("listening on " + started.port());
    }
}
