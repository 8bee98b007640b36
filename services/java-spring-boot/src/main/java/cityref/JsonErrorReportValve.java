package cityref;

import cityref.generated.model.Error;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import tools.jackson.databind.json.JsonMapper;

/**
 * Tomcat's error report for what its HTTP parser and limits refuse before any filter or servlet
 * runs (a malformed request line or field, a head over {@code maxHttpRequestHeaderSize}): the
 * status Tomcat chose, with the contract's JSON body instead of Tomcat's HTML page. It is Tomcat's
 * own extension point for that answer (the host's {@code errorReportValveClass}), installed by
 * {@link TomcatConfiguration}; errors inside the application never reach it (Spring MVC's
 * {@link ErrorAdvice} answers them).
 */
public class JsonErrorReportValve extends ErrorReportValve {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        AppError error = TomcatErrorController.forTomcatStatus(status);
        byte[] body = JSON.writeValueAsBytes(new Error(error.getMessage()));
        try {
            response.setContentType("application/json");
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
            response.finishResponse();
        } catch (IOException | IllegalStateException e) {
            // the client is gone or the answer was already committed: nothing more to send
        }
    }
}
