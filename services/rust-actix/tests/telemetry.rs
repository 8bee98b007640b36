//! Ours in the telemetry: a failure's text for a log line's `error`.

use cityref_rust_actix::telemetry::describe;

/// The spec's rule: the error's text, then each cause's text that the text so far does not
/// already contain, joined by `: `.
#[test]
fn failures_are_described_with_each_new_cause_once() {
    #[derive(Debug)]
    struct Failure(&'static str, Option<Box<Failure>>);
    impl std::fmt::Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Failure {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|cause| cause as _)
        }
    }
    let chain = |texts: &[&'static str]| {
        texts
            .iter()
            .rev()
            .fold(None, |cause, text| Some(Box::new(Failure(text, cause))))
            .unwrap()
    };
    for (texts, want) in [
        (&["refused"][..], "refused"),
        (&["error sending request", "refused"], "error sending request: refused"),
        // The client's error repeats its cause's text: written once.
        (
            &[
                "error sending request for url (x)",
                "error sending request for url (x)",
                "refused",
            ],
            "error sending request for url (x): refused",
        ),
        // A cause an earlier text already contains, even when it is not the one just before.
        (
            &[
                "request failed: tcp connect error",
                "client error (Connect)",
                "tcp connect error",
            ],
            "request failed: tcp connect error: client error (Connect)",
        ),
        (&["a", "b", "a", "c"], "a: b: c"),
    ] {
        assert_eq!(describe(&*chain(texts)), want, "{texts:?}");
    }
}
