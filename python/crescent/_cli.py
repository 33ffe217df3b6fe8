"""The `crescent` console entry point of the wheel: runs the command-line
binary installed inside the package (crescent/bin/crescent) with the same
arguments, in place of this interpreter (its exit status is the binary's).

From a build tree (PYTHONPATH=build/python) the binary is build/bin/crescent
and this module is not used.
"""

import os
import sys


def binary_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "crescent")


def main():
    path = binary_path()
    if not os.access(path, os.X_OK):
        sys.stderr.write("crescent: the command-line binary %s is missing or not executable; "
                         "reinstall the wheel (make wheel)\n" % path)
        return 127
    os.execv(path, ["crescent", *sys.argv[1:]])
