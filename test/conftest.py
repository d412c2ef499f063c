"""pytest configuration: a private compile cache per test session."""

import os
import tempfile

os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-test-cache-"))
