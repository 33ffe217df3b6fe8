"""Crescent's end-to-end harness: a tiny GQA model served with prefix reuse
through crescent.hicache. Run it with `python3 -m crescent_e2e --help`."""
