"""Stand-in for sglang.srt.mem_cache.storage.backend_factory: the dynamic
loading path of `--hicache-storage-backend dynamic` (module_path and class_name
from the extra config; the class must derive from HiCacheStorage; it is built
with the storage config and the keyword arguments as one dict)."""

import importlib
from typing import Any, Dict

from sglang.srt.mem_cache.hicache_storage import HiCacheStorage, HiCacheStorageConfig


class StorageBackendFactory:
    @staticmethod
    def _load_backend_class(module_path: str, class_name: str, backend_name: str):
        try:
            module = importlib.import_module(module_path)
            backend_class = getattr(module, class_name)
        except (ImportError, AttributeError) as e:
            raise ImportError(f"Failed to import backend '{backend_name}' from "
                              f"'{module_path}': {e}") from e
        if not issubclass(backend_class, HiCacheStorage):
            raise TypeError(f"Backend class {class_name} must inherit from HiCacheStorage")
        return backend_class

    @classmethod
    def create_backend(cls, backend_name: str, storage_config: HiCacheStorageConfig,
                       mem_pool_host: Any, **kwargs) -> HiCacheStorage:
        if backend_name == "dynamic" and storage_config.extra_config is not None:
            return cls._create_dynamic_backend(storage_config.extra_config, storage_config,
                                               mem_pool_host, **kwargs)
        raise ValueError(f"Unknown storage backend '{backend_name}'.")

    @classmethod
    def _create_dynamic_backend(cls, backend_config: Dict[str, Any],
                                storage_config: HiCacheStorageConfig, mem_pool_host: Any,
                                **kwargs) -> HiCacheStorage:
        for field in ("backend_name", "module_path", "class_name"):
            if field not in backend_config:
                raise ValueError(f"Missing required field '{field}' in backend config for "
                                 "'dynamic' backend")
        backend_class = cls._load_backend_class(backend_config["module_path"],
                                                backend_config["class_name"],
                                                backend_config["backend_name"])
        return backend_class(storage_config, kwargs)
