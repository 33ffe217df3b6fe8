"""A stand-in for the parts of SGLang that a HiCache storage backend meets,
written from SGLang's published signatures (SGLang cannot be installed here).

tests/python/conftest.py puts this directory first on sys.path, so
`import sglang...` in crescent.hicache finds these modules, as it would find
SGLang's in a server: the adapter derives from this HiCacheStorage, returns
this PoolTransferResult, and is loaded by this StorageBackendFactory.
"""
