"""Session hints for the HiCache adapter (docs/engines.md, "Session hints").

SGLang's HiCacheStorage interface has no call for "this conversation is
over", and SGLang itself fills ``HiCacheStorageExtraInfo`` with
``prefix_keys`` only; its ``extra_info`` dict is free for a caller's own
fields. Crescent defines one there:

* ``extra_info={"session_end": True}`` on a ``batch_set_v1`` /
  ``batch_get_v1`` / ``batch_set_v2`` / ``batch_get_v2`` call: the pages of
  this call are the last turn of a conversation that has ended (a leaf no
  later request extends). Once the call's I/O is done, every object it
  named, stored before or just written, is hinted as ended
  (``Store.end_session``).

and one method, for whoever learns that a session closed (a hook on SGLang's
``close_session``, an agent framework at the end of its task loop):

* ``end_session(keys)``: ``keys`` are SGLang page keys (page hashes, as in
  ``batch_set_v1``); this rank's objects of those pages are hinted as ended.

A hint is advice: nothing is removed, and a page another request reads
afterwards keeps its place. A store without ``end_session`` (another
Mooncake-compatible object) is sent no hints.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

SESSION_END = "session_end"  # Crescent's key in HiCacheStorageExtraInfo.extra_info


def marks_session_end(extra_info: Optional[Any]) -> bool:
    """Whether SGLang's extra_info says the call's pages end their session."""
    info = getattr(extra_info, "extra_info", None)
    return isinstance(info, dict) and bool(info.get(SESSION_END))


class SessionHints:
    """Mixin of CrescentHiCacheStorage: needs ``store``, ``_page_object_keys``
    and ``_count``; ``_hints`` is decided once, when the store is known."""

    _hints = False

    def _decide_hints(self) -> None:
        self._hints = callable(getattr(self.store, "end_session", None))

    def end_session(self, keys: Sequence[str]) -> int:
        """Hints that the conversation of these SGLang pages has ended; returns
        what the store answered (crescent.Store: objects marked, or a negative
        code; Mooncake's module: 0 or its code), 0 when no hint could be sent."""
        keys = list(keys)
        if not keys:
            return 0
        return self._end_objects(self._page_object_keys(keys))

    def _end_objects(self, obj_keys: List[str]) -> int:
        if not self._hints or not obj_keys:
            return 0
        rc = int(self.store.end_session(obj_keys))
        self._count(session_end_calls=1, session_end_objects=len(obj_keys),
                    session_end_marked=max(rc, 0), session_end_failures=1 if rc < 0 else 0)
        return rc

    def _end_if_final(self, obj_keys: List[str], extra_info: Optional[Any]) -> None:
        """After a call's I/O: its objects are hinted when extra_info says so."""
        if marks_session_end(extra_info):
            self._end_objects(obj_keys)
