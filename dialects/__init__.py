"""kiln's dialects: `tensorssa` and `immut` (mutation), and thin StableHLO op builders."""
