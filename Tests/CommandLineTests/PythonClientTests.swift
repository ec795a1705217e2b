import Foundation
import SeededRandom
import Testing

extension Daemons {
    /// The Python client's own tests (clients/python/tests) run with python3's unittest
    /// against the motiond built here, which they start themselves (replaying the recorded
    /// drag, stopped and started again on one socket): values arrive, errors carry their code,
    /// a subscription resumes after a restart, and examples/python/follow_card.py carries on
    /// through one. In the Daemons suite, as they start motiond.
    @Suite("The Python client")
    struct PythonClientTests {
        @Test("python3 -m unittest discover clients/python/tests passes against the built motiond", .seeded)
        func unittests() throws {
            let package = EndToEnd.repository.appendingPathComponent("clients/python").path
            let run = try Run("/usr/bin/env", [
                "MOTIOND=" + Run.productsDirectory.appendingPathComponent("motiond").path,
                // The garbage the hostile server sends is drawn from the suite's seed.
                "MOTIOND_TEST_SEED=\(TestSeed.value)",
                "/usr/bin/python3", "-m", "unittest", "discover", "-v",
                "-s", package + "/tests", "-t", package,
            ], absolute: true, deadline: 180)
            // unittest reports on standard error: "Ran N tests", then "OK" (with "skipped=" when
            // it found no motiond, which here is a failure).
            #expect(run.status == 0, "the Python client's tests failed:\n\(run.error.suffix(6000))")
            #expect(run.error.contains("\nOK") && !run.error.contains("skipped"), "\(run.error.suffix(3000))")
            #expect(!run.error.contains("Ran 0 tests"), "\(run.error.suffix(3000))")
        }
    }
}
