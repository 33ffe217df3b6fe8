#!/usr/bin/env python3
"""Checks, on a built tree, that the client side includes and links nothing of
the servers (the layering of docs/building.md, "Libraries by role").

    scripts/check_layers.py --build BUILD --probe EXE --python-ext SO [--python-node SO]

1. Includes: every header that the compiler read for an object of the client's
   libraries and of the Python client extension (their .o.d dependency files;
   the headers under src/ and include/) is one of the client side: a header
   of those libraries' own sources, src/common, src/client, include/crescent,
   the generated messages, or one of the few header-only files named below.
2. Link lines: the probe (a program linked with crescent_client alone) and the
   Python module's client extension (_crescent, and the libcrescent_pyclient.so
   it loads) are linked with no server library and not with libpmem2.
3. Binaries (ldd, nm): neither needs libpmem2, directly or through another
   library, and neither holds a pmem2_ or server symbol; the shared objects of
   the build tree that the extension loads are checked the same way.
4. The store node's extension (_node, loaded only by a Store that contributes a
   segment, docs/python.md) links and holds nothing of the master side, and
   defines no symbol that libcrescent_pyclient.so defines: the process holds
   one copy of the client (two would register the protobuf descriptors twice).
Prints each violation; exits 1 on any.
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
               "crescent_auth", "crescent_etcd", "crescent_etcd_proto"]
# The Python module's client extension and the shared object under it.
PYTHON_CLIENT = ["crescent_pyclient", "_crescent"]
# Headers with no source of their own that the client side may read.
CLIENT_HEADERS = {
    "src/master/types.h",          # the vocabulary of the master's API (no code)
    "src/master/master_config.h",  # its limits (key length, replicas)
    "src/rpc/control_methods.h",   # the lean protocol's call numbers
    "src/rpc/master_client_wire.h",
    "src/rpc/snapshot_part.h",     # the ReadSnapshot RPC's part, for both ends
    "src/transfer/transport.h",
    "src/transfer/shm_protocol.h",
}
CLIENT_DIRS = ("src/common/", "src/client/", "include/crescent/")

SERVER_LIBS = ["crescent_transfer_server", "crescent_store", "crescent_server",
               "crescent_rpc_server", "crescent_rpc_validation", "crescent_master",
               "crescent_master_metrics", "crescent_durability", "crescent_admin_http"]
# What the Python module's store node extension brings (see above).
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


def linked_objects(target_dir):
    """The objects on the link (or archive) line of the target whose CMakeFiles
    directory is `target_dir`, as absolute paths; None before it is linked."""
    link = os.path.join(target_dir, "link.txt")
    if not os.path.exists(link):
        return None
    cwd = os.path.dirname(os.path.dirname(target_dir))  # where the line runs
    words = open(link, encoding="utf-8").read().split()
    return {os.path.normpath(os.path.join(cwd, w)) for w in words if w.endswith(".o")}


def check_includes(build, root, targets, problems):
    allowed = set(CLIENT_HEADERS)
    depfiles = []
    for lib in targets:
        dirs = target_dirs(build, lib)
        if not dirs:
            problems.append(f"no objects of {lib} under {build}: build it first")
        for d in dirs:
            linked = linked_objects(d)
            for dep in glob.glob(os.path.join(d, "**", "*.o.d"), recursive=True):
                if linked is not None and os.path.normpath(dep[:-len(".d")]) not in linked:
                    continue  # left by a source the target no longer has
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


def loaded_objects(path):
    """name -> resolved path of every shared object `path` loads (ldd: transitive)."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=False).stdout
    return dict(re.findall(r"^\s*(\S+) => (\S+)", out, re.MULTILINE))


def own_objects(path, build):
    """The shared objects of the build tree that `path` loads."""
    return sorted(p for p in loaded_objects(path).values()
                  if os.path.realpath(p).startswith(build + os.sep))


def check_binary(path, refused_patterns, refuse_pmem2_needed, problems):
    if not os.path.exists(path):
        problems.append(f"{path}: not built")
        return
    name = os.path.basename(path)
    if refuse_pmem2_needed:
        for needed in loaded_objects(path):
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


def strong_definitions(path):
    """The exported symbols `path` defines itself (code and data, not weak ones)."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "TDBR"}


def check_one_copy(node, build, problems):
    if not os.path.exists(node):
        problems.append(f"{node}: not built")
        return
    name = os.path.basename(node)
    client_objects = own_objects(node, build)
    if not client_objects:
        problems.append(f"{name}: the client's shared object is not among what it loads")
    mine = strong_definitions(node)
    for obj in client_objects:
        both = sorted(mine & strong_definitions(obj))
        if both:
            problems.append(f"{name} defines {len(both)} symbol(s) that "
                            f"{os.path.basename(obj)} defines too, e.g. {both[0]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--probe", required=True, help="a program linked with crescent_client")
    parser.add_argument("--python-ext",
                        help="the Python module's client extension (_crescent*.so)")
    parser.add_argument("--python-node",
                        help="the Python module's store node extension (_node*.so)")
    args = parser.parse_args()
    build = os.path.realpath(args.build)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    check_includes(build, root, CLIENT_LIBS + (PYTHON_CLIENT if args.python_ext else []),
                   problems)
    refused_libs = SERVER_LIBS + ["libpmem2"]
    refused_symbols = MASTER_SIDE_SYMBOLS + STORE_NODE_SYMBOLS
    probe_target = os.path.basename(args.probe)
    check_link_line(build, probe_target, refused_libs, problems)
    check_binary(args.probe, refused_symbols, True, problems)
    if args.python_ext:
        check_link_line(build, "_crescent", refused_libs, problems)
        check_binary(args.python_ext, refused_symbols, True, problems)
        for obj in own_objects(args.python_ext, build):
            target = os.path.basename(obj)[len("lib"):].split(".so")[0]
            check_link_line(build, target, refused_libs, problems)
            check_binary(obj, refused_symbols, True, problems)
    if args.python_node:
        master_side = [lib for lib in SERVER_LIBS if lib not in STORE_NODE_LIBS]
        check_link_line(build, "_node", master_side, problems)
        check_binary(args.python_node, MASTER_SIDE_SYMBOLS, False, problems)
        check_one_copy(args.python_node, build, problems)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
