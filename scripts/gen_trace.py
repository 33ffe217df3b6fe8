#!/usr/bin/python3
"""Generates a small synthetic Mooncake-format (FAST'25) JSONL trace.

Each line is one request: {"timestamp" (ms), "input_length", "output_length",
"hash_ids"}, where a hash id names one 512-token block and equal ids are the
same reusable prefix block. The workload mixes the two shapes that make prefix
caching pay off:

  * multi-turn conversations: every turn resends the whole history (its blocks
    keep their ids) plus the last answer and a new question (fresh ids);
  * one-shot requests that share a popular system prompt (Zipf-like choice)
    followed by a private document.

Output is fully determined by --seed and --requests, so the bundled
tests/data/small_trace.jsonl can be regenerated bit for bit:

    /usr/bin/python3 scripts/gen_trace.py > tests/data/small_trace.jsonl

--shape picks another workload from scripts/trace_shapes.py instead (chat, prompts,
agent, scan, phase; each is described there), in the same format and just as
reproducible:

    /usr/bin/python3 scripts/gen_trace.py --shape agent --requests 4000 --seed 1 > agent.jsonl
"""

import argparse
import json
import random
import sys

from trace_shapes import BLOCK_TOKENS, SHAPES, IdSource
from trace_shapes import generate as generate_shape


def generate(num_requests, seed):
    rng = random.Random(seed)
    ids = IdSource()
    prompts = [ids.take(rng.randint(2, 12)) for _ in range(12)]
    # Popularity of system prompt k falls off like 1/(k+1).
    weights = [1.0 / (k + 1) for k in range(len(prompts))]

    conversations = []  # open conversations: their hash_ids so far
    t_ms = 0
    out = []
    while len(out) < num_requests:
        t_ms += int(rng.expovariate(1.0 / 40.0))
        roll = rng.random()
        if conversations and roll < 0.55:
            # Next turn of an open conversation: history + answer + question.
            k = rng.randrange(len(conversations))
            hist = conversations[k] + ids.take(rng.randint(1, 3))
            if len(hist) > 64 or rng.random() < 0.12:
                conversations.pop(k)  # the user went away
            else:
                conversations[k] = hist
        elif roll < 0.80:
            # A new conversation under a system prompt.
            prompt = rng.choices(prompts, weights)[0]
            hist = prompt + ids.take(rng.randint(1, 4))
            conversations.append(hist)
        else:
            # One-shot: a shared prompt and a private document.
            prompt = rng.choices(prompts, weights)[0]
            hist = prompt + ids.take(rng.randint(2, 20))
        input_length = len(hist) * BLOCK_TOKENS - rng.randrange(BLOCK_TOKENS)
        out.append({
            "timestamp": t_ms,
            "input_length": input_length,
            "output_length": rng.randint(4, 600),
            "hash_ids": list(hist),
        })
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--seed", type=int, default=20250226)
    parser.add_argument("--shape", choices=["mixed"] + sorted(SHAPES), default="mixed",
                        help="mixed (the default, described above) or a shape of trace_shapes.py")
    args = parser.parse_args()
    if args.shape == "mixed":
        requests = generate(args.requests, args.seed)
    else:
        requests = generate_shape(args.shape, args.requests, args.seed)
    for request in requests:
        sys.stdout.write(json.dumps(request) + "\n")


if __name__ == "__main__":
    main()
