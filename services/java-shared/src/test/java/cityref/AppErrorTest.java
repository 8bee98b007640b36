package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class AppErrorTest {
    @Test
    void aFailureIsItsTextThenEachCauseNotAlreadyInIt() {
        var refused = new ConnectException("Connection refused");
        // ExecutionException's message is its cause's toString(): the cause adds nothing, and is left out.
        var wrapped = new ExecutionException(refused);
        assertEquals("ExecutionException: java.net.ConnectException: Connection refused", AppError.describe(wrapped));
        var chain = new IOException("request failed", new IllegalStateException());
        assertEquals("IOException: request failed: IllegalStateException", AppError.describe(chain));
    }

    @Test
    void aLoopingChainEnds() {
        var a = new IllegalStateException("a");
        var b = new IllegalArgumentException("b", a);
        a.initCause(b);
        assertEquals(10, AppError.causes(a).size());
        assertEquals("IllegalStateException: a: IllegalArgumentException: b", AppError.describe(a));
    }

    @Test
    void theStatusIsTheSpecsCode() {
        assertEquals(405, AppError.methodNotAllowed().status());
        assertEquals(504, AppError.timeout().status());
    }
}
