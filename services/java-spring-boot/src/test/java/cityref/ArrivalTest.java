package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ArrivalTest {
    @Test
    void theTasksFirstRequestIsDueFromTheHandOverEveryLaterOneFromItsStart() {
        long handedOver = System.nanoTime() - 5_000_000_000L;
        long[] seen = new long[2];
        Arrival.run(handedOver, () -> {
            Arrival.requestStarts();
            seen[0] = Arrival.nanos();
            Arrival.requestStarts(); // a second request pipelined on the same connection
            seen[1] = Arrival.nanos();
        });
        assertEquals(handedOver, seen[0]);
        assertTrue(seen[1] - handedOver >= 5_000_000_000L, "the pipelined request's clock starts at its own start");
    }

    @Test
    void unboundTheClockStartsAtTheCall() {
        long before = System.nanoTime();
        Arrival.requestStarts();
        assertTrue(Arrival.nanos() >= before);
    }
}
