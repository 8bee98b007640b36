// Helidon SE WebServer alone, one route: GET /hello -> "hello <raw query>" (so that ?n=1 and ?n=2 tell the
// answers apart). Nothing else is routed: a smuggled GET /smuggled gets Helidon's own 404. Run by repro.sh:
//   java -cp '<helidon-webserver 4.4.0 and its dependencies>/*' Repro.java <port>
import io.helidon.webserver.WebServer;

public class Repro {
    public static void main(String[] args) {
        WebServer started = WebServer.builder()
                .host("127.0.0.1")
                .port(Integer.parseInt(args[0]))
                .routing(r -> r.get("/hello", (req, res) -> res.send("hello " + req.query().rawValue())))
                .build()
                .start();
        System.out.println("listening on " + started.port());
    }
}
