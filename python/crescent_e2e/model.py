"""A small decoder-only transformer (GQA) with random weights from a fixed seed.

Llama-shaped: token embedding, ``n_layers`` blocks of RMSNorm -> grouped-query
attention with rotary positions -> RMSNorm -> SwiGLU MLP, then a final norm and
the LM head. Float32 on CPU. Nothing is downloaded: the weights come from
``torch.Generator().manual_seed(seed)``.

``prefill(tokens, past_k, past_v)`` runs the prompt's uncached tail on top of an
externally supplied KV prefix (the pages loaded from the store) and returns the
logits of the last token plus the KV of the whole sequence, per layer, shaped
``(n_kv_heads, T, head_dim)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

PAGE_SIZE = 64


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 4096
    d_model: int = 512
    n_layers: int = 4
    n_heads: int = 8
    n_kv_heads: int = 2
    head_dim: int = 64
    ffn_dim: int = 1408
    rope_theta: float = 10000.0
    seed: int = 1234

    @staticmethod
    def tiny() -> "ModelConfig":
        """The smallest model: one layer, for tests."""
        return ModelConfig(vocab_size=512, d_model=64, n_layers=1, n_heads=4,
                           n_kv_heads=2, head_dim=16, ffn_dim=128)

    @staticmethod
    def small() -> "ModelConfig":
        return ModelConfig(vocab_size=2048, d_model=256, n_layers=2, n_heads=4,
                           n_kv_heads=2, head_dim=64, ffn_dim=704)

    def kv_bytes_per_token(self) -> int:
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * 4


def _rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


class TinyGQAModel:
    def __init__(self, cfg: ModelConfig = ModelConfig()):
        if cfg.n_heads % cfg.n_kv_heads:
            raise ValueError("n_heads must be a multiple of n_kv_heads")
        self.cfg = cfg
        g = torch.Generator().manual_seed(cfg.seed)

        def rand(*shape: int, fan_in: int) -> torch.Tensor:
            return torch.randn(*shape, generator=g) / math.sqrt(fan_in)

        d, hd = cfg.d_model, cfg.head_dim
        self.embed = torch.randn(cfg.vocab_size, d, generator=g) * 0.5
        self.layers = []
        for _ in range(cfg.n_layers):
            self.layers.append({
                "attn_norm": torch.ones(d),
                "wq": rand(d, cfg.n_heads * hd, fan_in=d),
                "wk": rand(d, cfg.n_kv_heads * hd, fan_in=d),
                "wv": rand(d, cfg.n_kv_heads * hd, fan_in=d),
                "wo": rand(cfg.n_heads * hd, d, fan_in=cfg.n_heads * hd),
                "mlp_norm": torch.ones(d),
                "w_gate": rand(d, cfg.ffn_dim, fan_in=d),
                "w_up": rand(d, cfg.ffn_dim, fan_in=d),
                "w_down": rand(cfg.ffn_dim, d, fan_in=cfg.ffn_dim),
            })
        self.final_norm = torch.ones(d)
        self.lm_head = rand(d, cfg.vocab_size, fan_in=d)
        inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        self._inv_freq = inv

    def _rope(self, x: torch.Tensor, start: int) -> torch.Tensor:
        """x: (heads, T, head_dim); positions start .. start+T-1."""
        t = x.shape[1]
        pos = torch.arange(start, start + t, dtype=torch.float64)
        ang = torch.outer(pos, self._inv_freq)
        cos, sin = ang.cos().float(), ang.sin().float()
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = x1 * cos - x2 * sin
        out[..., 1::2] = x1 * sin + x2 * cos
        return out

    @torch.no_grad()
    def prefill(self, tokens: List[int], past_k: Optional[List[torch.Tensor]] = None,
                past_v: Optional[List[torch.Tensor]] = None
                ) -> Tuple[torch.Tensor, List[torch.Tensor], List[torch.Tensor]]:
        """Runs `tokens` after a KV prefix of P tokens (past_k[l]: (kvh, P, hd)).

        Returns (logits of the last token, K per layer, V per layer), the K/V
        covering prefix + tokens.
        """
        cfg = self.cfg
        if not tokens:
            raise ValueError("prefill needs at least one token")
        p = 0 if past_k is None else past_k[0].shape[1]
        t = len(tokens)
        x = self.embed[torch.tensor(tokens, dtype=torch.long)]
        group = cfg.n_heads // cfg.n_kv_heads
        scale = 1.0 / math.sqrt(cfg.head_dim)
        # Causal mask of the new queries (absolute p..p+t-1) over keys 0..p+t-1.
        q_pos = torch.arange(p, p + t).unsqueeze(1)
        k_pos = torch.arange(0, p + t).unsqueeze(0)
        mask = torch.zeros(t, p + t)
        mask.masked_fill_(k_pos > q_pos, float("-inf"))
        ks: List[torch.Tensor] = []
        vs: List[torch.Tensor] = []
        for li, w in enumerate(self.layers):
            h = _rms_norm(x, w["attn_norm"])
            q = (h @ w["wq"]).view(t, cfg.n_heads, cfg.head_dim).transpose(0, 1)
            k = (h @ w["wk"]).view(t, cfg.n_kv_heads, cfg.head_dim).transpose(0, 1)
            v = (h @ w["wv"]).view(t, cfg.n_kv_heads, cfg.head_dim).transpose(0, 1)
            q = self._rope(q, p)
            k = self._rope(k, p)
            if p:
                k = torch.cat([past_k[li], k], dim=1)
                v = torch.cat([past_v[li], v], dim=1)
            ks.append(k)
            vs.append(v)
            kr = k.repeat_interleave(group, dim=0)
            vr = v.repeat_interleave(group, dim=0)
            att = torch.softmax((q @ kr.transpose(1, 2)) * scale + mask, dim=-1)
            o = (att @ vr).transpose(0, 1).reshape(t, cfg.n_heads * cfg.head_dim)
            x = x + o @ w["wo"]
            h = _rms_norm(x, w["mlp_norm"])
            x = x + (torch.nn.functional.silu(h @ w["w_gate"]) * (h @ w["w_up"])) @ w["w_down"]
        last = _rms_norm(x[-1], self.final_norm)
        return last @ self.lm_head, ks, vs
