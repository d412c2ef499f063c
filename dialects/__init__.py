"""kiln's dialects: `tensorssa` and `immut` (mutation), `kiln` (run-time checks and scans), and thin StableHLO op builders."""
