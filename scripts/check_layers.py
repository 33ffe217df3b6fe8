#!/usr/bin/env python3
"""Checks, on a built tree, that the client side includes and links nothing of
the servers (the layering of docs/building.md, "Libraries by role").

    scripts/check_layers.py --build BUILD --probe EXE --python-ext SO

1. Includes: every header that the compiler read for an object of the client's
   libraries (their .o.d dependency files) is one of the client side: a header
   of those libraries' own sources, src/common, src/client, include/crescent,
   the generated messages, or one of the few header-only files named below.
2. Link lines: the probe (a program linked with crescent_client alone) is
   linked with no server library and not with libpmem2; the Python module
   with no master-side library.
3. Binaries (readelf, nm): the probe needs no libpmem2 and holds no pmem2_ or
   server symbol; the Python module holds no master-side symbol.

The Python module starts an in-process store node when asked to contribute a
segment (docs/python.md, global_segment_size), so it links the store node and
the data-plane servers under it (libpmem2 included); everything of the master
side is still refused there. Prints each violation; exits 1 on any.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# The libraries a client is made of, below crescent_client.
CLIENT_LIBS = ["crescent_client", "crescent_rpc_client", "crescent_transfer_client",
               "crescent_wire", "crescent_metrics_core", "crescent_common", "crescent_proto",
               "crescent_auth"]
# Headers with no source of their own that the client side may read.
CLIENT_HEADERS = {
    "src/master/types.h",          # the vocabulary of the master's API (no code)
    "src/master/master_config.h",  # its limits (key length, replicas)
    "src/rpc/control_methods.h",   # the lean protocol's call numbers
    "src/rpc/master_client_wire.h",
    "src/transfer/transport.h",
    "src/transfer/shm_protocol.h",
}
CLIENT_DIRS = ("src/common/", "src/client/", "include/crescent/")

SERVER_LIBS = ["crescent_transfer_server", "crescent_store", "crescent_server",
               "crescent_rpc_server", "crescent_rpc_validation", "crescent_master",
               "crescent_master_metrics", "crescent_durability", "crescent_admin_http"]
# What the Python module's in-process store node brings (see above).
STORE_NODE_LIBS = {"crescent_transfer_server", "crescent_store"}

MASTER_SIDE_SYMBOLS = [
    r"crescent::master::MasterService::", r"crescent::rpc::MasterServer::",
    r"crescent::rpc::ControlServer::", r"crescent::rpc::MasterHandlers::",
    r"crescent::rpc::RpcServerMetrics::", r"crescent::server::", r"crescent::durability::",
    r"crescent::metrics::AdminHttpServer::",
]
STORE_NODE_SYMBOLS = [
    r"\bpmem2_", r"crescent::store::", r"crescent::transfer::TcpDataServer::",
    r"crescent::transfer::ShmServer::", r"crescent::transfer::SegmentMemory::",
    r"crescent::transfer::PmemFile::", r"crescent::transfer::CopyExecutor::",
]


def target_dirs(build, target):
    return glob.glob(os.path.join(build, "**", "CMakeFiles", target + ".dir"), recursive=True)


def check_includes(build, root, problems):
    allowed = set(CLIENT_HEADERS)
    depfiles = []
    for lib in CLIENT_LIBS:
        dirs = target_dirs(build, lib)
        if not dirs:
            problems.append(f"no objects of {lib} under {build}: build it first")
        for d in dirs:
            for dep in glob.glob(os.path.join(d, "**", "*.o.d"), recursive=True):
                # Paths in it are relative to where it was compiled: the
                # target's directory in the build tree.
                depfiles.append((lib, dep, os.path.dirname(os.path.dirname(d))))
                src = os.path.relpath(dep, d)[:-len(".o.d")]  # e.g. client.cc
                rel = os.path.relpath(os.path.join(os.path.dirname(d), "..", src), build)
                allowed.add(rel)
                allowed.add(os.path.splitext(rel)[0] + ".h")
    for lib, dep, cwd in depfiles:
        text = open(dep, encoding="utf-8", errors="replace").read().replace("\\\n", " ")
        for path in text.split(":", 1)[-1].split():
            path = os.path.normpath(os.path.join(cwd, path))
            rel = os.path.relpath(path, root)
            if rel.startswith("..") or not rel.startswith(("src/", "include/")):
                continue  # system and generated headers
            if rel in allowed or rel.startswith(CLIENT_DIRS):
                continue
            obj = os.path.basename(dep)[:-len(".o.d")]
            problems.append(f"{lib}: {obj} includes {rel}, a header of the servers")


def linked_libs(build, target):
    """The crescent libraries and the libpmem2 on `target`'s link line."""
    dirs = target_dirs(build, target)
    if not dirs:
        return None
    line = open(os.path.join(dirs[0], "link.txt"), encoding="utf-8").read()
    libs = set(re.findall(r"lib(crescent_\w+)\.a\b", line))
    if re.search(r"pmem2", line):
        libs.add("libpmem2")
    return libs


def check_link_line(build, target, refused, problems):
    libs = linked_libs(build, target)
    if libs is None:
        problems.append(f"no link line for {target} under {build}: build it first")
        return
    for lib in sorted(libs & set(refused)):
        problems.append(f"{target} is linked with {lib}")


def check_binary(path, refused_patterns, refuse_pmem2_needed, problems):
    if not os.path.exists(path):
        problems.append(f"{path}: not built")
        return
    name = os.path.basename(path)
    if refuse_pmem2_needed:
        dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                                 check=True).stdout
        for needed in re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic):
            if "pmem" in needed:
                problems.append(f"{name} needs {needed}")
    symbols = subprocess.run(["nm", "-C", path], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    symbols += subprocess.run(["nm", "-C", "-D", path], capture_output=True, text=True,
                              check=False).stdout.splitlines()
    pattern = re.compile("|".join(refused_patterns))
    hits = sorted({line.split(" ", 2)[-1] for line in symbols if pattern.search(line)})
    for symbol in hits[:10]:
        problems.append(f"{name} holds {symbol}")
    if len(hits) > 10:
        problems.append(f"{name}: and {len(hits) - 10} more such symbols")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--probe", required=True, help="a program linked with crescent_client")
    parser.add_argument("--python-ext", help="the Python module's extension (_crescent*.so)")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    check_includes(build, root, problems)
    probe_target = os.path.basename(args.probe)
    check_link_line(build, probe_target, SERVER_LIBS + ["libpmem2"], problems)
    check_binary(args.probe, MASTER_SIDE_SYMBOLS + STORE_NODE_SYMBOLS, True, problems)
    if args.python_ext:
        master_side = [lib for lib in SERVER_LIBS if lib not in STORE_NODE_LIBS]
        check_link_line(build, "_crescent", master_side, problems)
        check_binary(args.python_ext, MASTER_SIDE_SYMBOLS, False, problems)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
