"""An opt-in `mooncake` package that is Crescent: engines that import
`mooncake.store` (vLLM's MooncakeStoreConnector, LMCache's mooncakestore://
connector, SGLang's Mooncake HiCache backend) get crescent.mooncake when this
directory (python/engines) comes before any real Mooncake on PYTHONPATH.
docs/engines.md says how to run each engine with it."""
