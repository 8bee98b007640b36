package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class AppErrorTest {
    @Test
    void theStatusIsTheSpecsCode() {
        assertEquals(405, AppError.methodNotAllowed().status());
        assertEquals(504, AppError.timeout().status());
    }
}
