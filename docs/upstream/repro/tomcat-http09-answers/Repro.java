/*
 * Tomcat alone (tomcat-embed-core, no Spring): one servlet, GET /hello -> "hello". Started by
 * repro.sh, which sends request lines to it and prints the bytes that come back (and by
 * ../tomcat-slow-head/repro.sh, which passes the connector's connectionTimeout in ms as a second
 * argument).
 *
 *   java -cp tomcat-embed-core.jar Repro.java <port> [<connectionTimeout ms>]
 */

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

public class Repro {
    public static void main(String[] args) throws Exception {
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("tomcat").toString());
        tomcat.setPort(Integer.parseInt(args[0]));
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "hello", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
                res.setContentType("text/plain");
                res.getWriter().write("hello");
            }
        });
        context.addServletMappingDecoded("/hello", "hello");
        Connector connector = tomcat.getConnector(); // the default HTTP/1.1 connector
        if (args.length > 1) {
            connector.setProperty("connectionTimeout", args[1]);
        }
        tomcat.start();
        System.out.println("listening");
        tomcat.getServer().await();
    }
}
