"""ReplicateConfig: Mooncake's per-put placement options, mapped onto Crescent's."""

from . import _crescent

# Mooncake's with_soft_pin is a flag; Crescent's soft pin needs a lifetime. 30
# minutes matches Mooncake master's default soft-pin TTL.
DEFAULT_SOFT_PIN_TTL_MS = 30 * 60 * 1000


class ReplicateConfig:
    """Placement of a put.

    replica_num        copies on distinct segments, >= 1; best effort: as many
                       as there are segments, at most 16 (more are taken as 16)
    with_soft_pin      evicted only after unpinned objects, for soft_pin_ttl_ms
                       (None, as in Mooncake: DEFAULT_SOFT_PIN_TTL_MS)
    with_hard_pin      never evicted (still removable)
    preferred_segment  segment to place the first copy in when it has room
    preferred_segments Mooncake's list form; its first entry is used when
                       preferred_segment is empty
    prefer_alloc_in_same_node  accepted for compatibility; a store that
                       contributes a segment always prefers it
    """

    def __init__(self, replica_num=1, with_soft_pin=False, with_hard_pin=False,
                 preferred_segment="", soft_pin_ttl_ms=None,
                 preferred_segments=None, prefer_alloc_in_same_node=False):
        self.replica_num = replica_num
        self.with_soft_pin = with_soft_pin
        self.with_hard_pin = with_hard_pin
        self.preferred_segment = preferred_segment
        self.soft_pin_ttl_ms = soft_pin_ttl_ms
        self.preferred_segments = list(preferred_segments or [])
        self.prefer_alloc_in_same_node = prefer_alloc_in_same_node

    def __repr__(self):
        return ("ReplicateConfig(replica_num=%r, with_soft_pin=%r, with_hard_pin=%r, "
                "preferred_segment=%r)" % (self.replica_num, self.with_soft_pin,
                                           self.with_hard_pin, self.preferred_segment))

    def to_put_options(self):
        if int(self.replica_num) < 1:
            raise ValueError("replica_num must be at least 1")
        o = _crescent.PutOptions()
        o.replica_count = min(int(self.replica_num), _crescent.MAX_REPLICAS)
        o.preferred_segment = self.preferred_segment or (
            self.preferred_segments[0] if self.preferred_segments else "")
        ttl = DEFAULT_SOFT_PIN_TTL_MS if self.soft_pin_ttl_ms is None else int(self.soft_pin_ttl_ms)
        if self.with_soft_pin and ttl < 1:
            raise ValueError("soft_pin_ttl_ms must be at least 1 (or None for the default)")
        o.soft_pin_ttl_ms = ttl if self.with_soft_pin else 0
        o.hard_pin = bool(self.with_hard_pin)
        return o


def put_options(config):
    """PutOptions for `config` (None: one replica, no pins)."""
    if config is None:
        return _crescent.PutOptions()
    if not isinstance(config, ReplicateConfig):
        raise TypeError("config must be a crescent.ReplicateConfig or None")
    return config.to_put_options()
