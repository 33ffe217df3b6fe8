"""`mooncake.store`, served by crescent.mooncake (see the package docstring)."""

from crescent.mooncake import *  # noqa: F401,F403
from crescent.mooncake import __all__  # noqa: F401
