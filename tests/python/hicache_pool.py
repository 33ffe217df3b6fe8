"""Stand-in SGLang host KV pools for the HiCache adapter tests.

The implementation lives in crescent_e2e.host_pool (the E2E harness uses it
too): MHAHostPool mirrors MHATokenToKVPoolHost (page_first: kv_buffer
(2, size, layer, head, dim), get_page_buffer_meta -> interleaved K, V page
pointers and sizes) and MLAHostPool mirrors MLATokenToKVPoolHost (one latent
object per page).
"""

from crescent_e2e.host_pool import MHAHostPool, MLAHostPool  # noqa: F401
