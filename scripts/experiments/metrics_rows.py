"""The rows of a metrics.jsonl file, for the experiment tables."""
import json
import sys


def metrics_rows(path):
    """Yields each non-blank line of `path` as a dict; exits naming the file
    and line on one that is not JSON."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: invalid JSON: {e}")
