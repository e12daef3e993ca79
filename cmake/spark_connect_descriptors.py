#!/usr/bin/env python3
"""Writes the Spark Connect protocol's descriptors as one FileDescriptorSet, for protoc.

Spark Connect's messages are defined by Spark's .proto files, which Sluice does not copy. The
PySpark client on PyPI (pyspark-client, pinned below with its sha256) ships them compiled: each
pyspark/sql/connect/proto/<name>_pb2.py holds its file's serialized FileDescriptorProto in one
bytes literal passed to AddSerializedFile. This script fetches that sdist once with pip into the
cache directory given as its argument, reads the literals with the ast module (nothing of the
package is imported or run), and writes <cache>/spark_connect.pb: a FileDescriptorSet whose
field 1 (repeated FileDescriptorProto) holds each file, in dependency order. protoc then reads it
with --descriptor_set_in (cmake/SparkConnectProtos.cmake). Runs at configure time, never at test
time; a finished cache is reused without network.

Usage: spark_connect_descriptors.py CACHE_DIR  (prints the path of the descriptor set)
"""
import ast
import hashlib
import io
import os
import subprocess
import sys
import tarfile

VERSION = "4.2.0"
SDIST = f"pyspark_client-{VERSION}.tar.gz"
SHA256 = "4008fe5e537bf0e57e7243d03abfaac089b7c87316bd07024784d8ea726f5d41"
# The files Sluice compiles (ml and pipelines are imported by base.proto).
FILES = ["types", "common", "expressions", "relations", "commands", "catalog", "ml_common", "ml",
         "pipelines", "base"]


def fail(message):
    sys.exit(f"spark_connect_descriptors: {message}")


def fetch(cache):
    path = os.path.join(cache, SDIST)
    if not os.path.exists(path):
        os.makedirs(cache, exist_ok=True)
        # pip prepares the sdist's metadata in an isolated build environment (setuptools).
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
               f"pyspark-client=={VERSION}", "-d", cache]
        if subprocess.run(cmd).returncode != 0:
            fail(f"pip could not download pyspark-client=={VERSION} into {cache}")
    with open(path, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        os.remove(path)
        fail(f"{path}: sha256 {digest}, expected {SHA256} (removed; run again)")
    return data


def serialized_descriptor(source, name):
    """The bytes literal given to AddSerializedFile in a generated _pb2.py."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "AddSerializedFile" and len(node.args) == 1):
            value = ast.literal_eval(node.args[0])
            if isinstance(value, bytes):
                return value
    fail(f"{name}: no AddSerializedFile(b'...') call")


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def main():
    if len(sys.argv) != 2:
        fail("usage: spark_connect_descriptors.py CACHE_DIR")
    cache = os.path.abspath(sys.argv[1])
    out = os.path.join(cache, "spark_connect.pb")
    stamp = os.path.join(cache, "spark_connect.pb.sha256")
    if os.path.exists(out) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == SHA256 + " code_size":
                print(out)
                return
    data = fetch(cache)
    members = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            base = os.path.basename(member.name)
            if "/pyspark/sql/connect/proto/" in member.name and base.endswith("_pb2.py"):
                members[base[: -len("_pb2.py")]] = tar.extractfile(member).read().decode()
    fds = bytearray()
    for name in FILES:
        if name not in members:
            fail(f"{SDIST} has no pyspark/sql/connect/proto/{name}_pb2.py")
        # FileDescriptorProto.options (8) gets optimize_for (9) = CODE_SIZE (2): a second
        # occurrence of a message field merges into the first, so this only adds that option.
        # Generated code then parses by reflection: much less code to compile, and plans are
        # small messages.
        blob = serialized_descriptor(members[name], name) + b"\x42\x02\x48\x02"
        fds += b"\x0a" + varint(len(blob)) + blob
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(fds)
    os.replace(tmp, out)
    with open(stamp, "w") as f:
        f.write(SHA256 + " code_size\n")
    print(out)


if __name__ == "__main__":
    main()
