"""Refuses, at import, an interpreter the extension was not built for.

The extension _crescent is built for one interpreter (CRESCENT_PYTHON,
Debian's /usr/bin/python3 by default: the one with Debian's numpy and torch),
and its file name carries that interpreter's ABI tag. Another interpreter
(another version, or another python3 first on PATH) would otherwise fail with
"No module named 'crescent._crescent'", which names neither cause nor cure.
"""

import sys
import sysconfig

from . import _built_for


def check():
    here = sysconfig.get_config_var("SOABI")
    if here == _built_for.SOABI:
        return
    raise ImportError(
        "crescent is built for %s (Python %s, ABI %s), and this is %s (Python %s, ABI %s): "
        "run it with %s (Debian's interpreter, with the numpy and torch the module is "
        "used with), or rebuild the module for this one (make build PYTHON=%s)" %
        (_built_for.PYTHON, _built_for.VERSION, _built_for.SOABI, sys.executable,
         sys.version.split()[0], here, _built_for.PYTHON, sys.executable))
