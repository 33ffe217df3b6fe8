"""The one thing pyproject.toml cannot say: the package holds compiled code.

The extensions are built by CMake, not by setuptools, so setuptools sees no
ext_modules and would tag the wheel py3-none-any. A distribution that reports
extension modules gets the interpreter's tags (cp311-cp311-linux_x86_64) and is
installed into platlib.
"""

from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution)
