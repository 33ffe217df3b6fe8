"""Workload shapes for scripts/gen_trace.py: seeded generators of Mooncake-format requests.

Every shape returns a list of requests {"timestamp" (ms), "input_length", "output_length",
"hash_ids"} in timestamp order. One hash id is one 512-token page. As in Mooncake's traces,
the last page of a request is partial: its id is fresh and never reused, and the next turn of
the same conversation resends the history up to it under new ids for what follows. The output
is a pure function of (shape, number of requests, seed).

Shapes:
  chat     multi-turn chat under a few small system prompts; most conversations are
           abandoned after their first request (a long tail), the engaged ones go on for
           many turns, with think times of tens of seconds.
  prompts  a few huge shared system prompts (Zipf popularity) with many short, private
           suffixes.
  agent    agent loops: each session re-reads a long context shared with other sessions,
           plus its own growing scratchpad, every few seconds.
  scan     the chat shape mixed with one-off scans of long documents that are never reused.
  phase    the chat shape for the first half of the requests, then the agent shape.
"""

import heapq
import itertools
import random

BLOCK_TOKENS = 512


class IdSource:
    """Hands out fresh hash ids, counting up from 0."""

    def __init__(self):
        self.next_id = 0

    def take(self, n):
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        return ids


def request(rng, t_ms, hash_ids, output_max=600):
    return {
        "timestamp": int(t_ms),
        "input_length": len(hash_ids) * BLOCK_TOKENS - rng.randrange(BLOCK_TOKENS),
        "output_length": rng.randint(4, output_max),
        "hash_ids": list(hash_ids),
    }


class EventQueue:
    """Sessions scheduled by time; ties keep insertion order."""

    def __init__(self):
        self.heap = []
        self.seq = itertools.count()

    def push(self, t_ms, session):
        heapq.heappush(self.heap, (t_ms, next(self.seq), session))

    def pop(self):
        t_ms, _, session = heapq.heappop(self.heap)
        return t_ms, session


def zipf_weights(n, s=1.0):
    return [1.0 / (k + 1) ** s for k in range(n)]


def run_sessions(rng, num_requests, start_ms, arrival_ms, new_session, t_end_ms=None):
    """Drives sessions: a new one arrives every Exp(arrival_ms); each session is a
    generator of (delay before this request in ms, hash_ids). Returns the requests."""
    events = EventQueue()
    events.push(start_ms + rng.expovariate(1.0 / arrival_ms), None)
    out = []
    while len(out) < num_requests:
        t_ms, session = events.pop()
        if session is None:  # an arrival: start a session, schedule the next arrival
            session = new_session()
            events.push(t_ms + rng.expovariate(1.0 / arrival_ms), None)
            delay, ids = 0.0, next(session)[1]
        else:
            ids = session.pending
        out.append(request(rng, t_ms, ids))
        step = next(session, None)
        if step is not None:
            delay, session.pending = step
            events.push(t_ms + delay, session)
    return out


class Session:
    """Wraps a generator so the queue can hold the request it has drawn next."""

    def __init__(self, gen):
        self.gen = gen
        self.pending = None

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.gen)


def chat_conversation(rng, ids, prompts, weights):
    """A conversation: the first request, then while the user stays, one turn per think time.
    P(another turn) is 0.25 after the first request and 0.85 after later ones."""
    history = rng.choices(prompts, weights)[0] + ids.take(rng.randint(1, 12))
    turn = 0
    while True:
        sent = history + ids.take(1)  # the partial last page
        yield rng.expovariate(1.0 / 60000.0), sent
        turn += 1
        if rng.random() > (0.25 if turn == 1 else 0.85) or len(history) > 200:
            return
        history = history + ids.take(rng.randint(1, 4))  # the answer and the next question


def chat_sessions(rng, ids):
    """Starts chat conversations under 8 small system prompts of Zipf popularity."""
    prompts = [ids.take(rng.randint(2, 6)) for _ in range(8)]
    weights = zipf_weights(len(prompts))
    return lambda: Session(chat_conversation(rng, ids, prompts, weights))


def chat(num_requests, rng, ids=None, start_ms=0):
    ids = ids or IdSource()
    return run_sessions(rng, num_requests, start_ms, 250.0, chat_sessions(rng, ids))


def prompts(num_requests, rng, ids=None, start_ms=0):
    ids = ids or IdSource()
    system = [ids.take(rng.randint(40, 160)) for _ in range(6)]
    weights = zipf_weights(len(system), 1.2)

    def one_shot():
        yield 0.0, rng.choices(system, weights)[0] + ids.take(rng.randint(1, 4))

    return run_sessions(rng, num_requests, start_ms, 100.0, lambda: Session(one_shot()))


def agent_session(rng, ids, contexts, weights):
    """An agent: a shared context, its task, then 3 to 30 steps a few seconds apart, each
    resending everything so far plus the last tool output."""
    history = rng.choices(contexts, weights)[0] + ids.take(rng.randint(2, 10))
    steps = rng.randint(3, 30)
    for _ in range(steps):
        yield rng.expovariate(1.0 / 4000.0), history + ids.take(1)
        history = history + ids.take(rng.randint(1, 8))


def agent(num_requests, rng, ids=None, start_ms=0):
    ids = ids or IdSource()
    contexts = [ids.take(rng.randint(30, 120)) for _ in range(4)]
    weights = zipf_weights(len(contexts))
    return run_sessions(rng, num_requests, start_ms, 1500.0,
                        lambda: Session(agent_session(rng, ids, contexts, weights)))


def scan(num_requests, rng, ids=None, start_ms=0):
    """Chat, with 30% of the sessions replaced by a one-off scan of a 30-200 page document."""
    ids = ids or IdSource()
    new_chat = chat_sessions(rng, ids)

    def document():
        yield 0.0, ids.take(rng.randint(30, 200))

    def new_session():
        if rng.random() < 0.3:
            return Session(document())
        return new_chat()

    return run_sessions(rng, num_requests, start_ms, 250.0, new_session)


def phase(num_requests, rng):
    ids = IdSource()
    first = chat(num_requests // 2, rng, ids)
    second = agent(num_requests - len(first), rng, ids, first[-1]["timestamp"] + 1)
    return first + second


SHAPES = {"chat": chat, "prompts": prompts, "agent": agent, "scan": scan, "phase": phase}


def generate(shape, num_requests, seed):
    rng = random.Random(seed)
    out = SHAPES[shape](num_requests, rng)
    out.sort(key=lambda r: r["timestamp"])  # stable: ties keep generation order
    return out
