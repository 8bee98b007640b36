package cityref;

/**
 * SIGTERM and SIGINT handled by the service itself, so that it stops gracefully and exits 0 (the
 * spec). A shutdown hook cannot: the JVM exits 143 after one, and JUL's own hook may close the log
 * handlers first. {@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only way; javac
 * warns about it whatever the flags, so this one file is compiled apart from the rest, without
 * {@code -Werror} (pom.xml).
 */
final class ShutdownSignals {
    private ShutdownSignals() {}

    /** Runs {@code handler} on the signal's thread at the first SIGTERM or SIGINT. */
    static void onTermOrInt(Runnable handler) {
        for (String name : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> handler.run());
        }
    }
}
