"""An S3 API server on loopback for the partkit/s3 tests: moto's server (the same as
`moto_server`), with buckets optionally filled through moto's Python API before it serves.

Filling 100,000 objects with PutObject over HTTP takes moto about 14 minutes (~120 requests/s,
measured); through its backend API it takes about 12 s. Listing still goes through the S3 REST
API, but moto scans and sorts the whole bucket for every ListObjectsV2 page (1.5 s a page at
100,000 keys, measured: 146 s for one listing), so this launcher memoises moto's own unpaginated
listing per (bucket, prefix, delimiter) until the next write: pagination, ordering, tokens and
the XML stay moto's.

Usage: python moto_s3.py PORT [BUCKET KEYS_FILE]...
KEYS_FILE holds one key per line (UTF-8, no trailing CR); every object is created with an
empty body.
Prints `ready PORT` on stdout once it serves; stops on SIGTERM or when stdin closes.
"""
import signal
import sys
import threading

from moto.server import ThreadedMotoServer
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import S3Backend, s3_backends


def memoise_listing():
    """Caches S3Backend.list_objects(marker=None, max_keys=None), cleared by any write."""
    cache = {}
    original = S3Backend.list_objects

    def list_objects(self, bucket, prefix, delimiter, marker, max_keys):
        if marker is not None or max_keys is not None:
            return original(self, bucket, prefix, delimiter, marker, max_keys)
        k = (id(self), bucket.name, prefix, delimiter)
        if k not in cache:
            cache[k] = original(self, bucket, prefix, delimiter, marker, max_keys)
        keys, folders, truncated, nxt = cache[k]
        return list(keys), list(folders), truncated, nxt

    S3Backend.list_objects = list_objects
    for name in dir(S3Backend):
        if name.startswith(("put_", "delete_", "create_", "copy_", "complete_", "restore_")):
            fn = getattr(S3Backend, name)
            if callable(fn):
                def wrapped(*a, __fn=fn, **kw):
                    cache.clear()
                    return __fn(*a, **kw)
                setattr(S3Backend, name, wrapped)


def fill(bucket, keys_file):
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
    backend.create_bucket(bucket, "us-east-1")
    with open(keys_file, "rb") as f:
        data = f.read().decode("utf-8")
    for key in data.split("\n"):
        if key == "":
            continue
        backend.put_object(bucket, key, b"")


def main():
    port = int(sys.argv[1])
    args = sys.argv[2:]
    memoise_listing()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    for i in range(0, len(args) - 1, 2):
        fill(args[i], args[i + 1])
    print(f"ready {port}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    server.stop()


if __name__ == "__main__":
    main()
