"""GPT-2-layout causal LM (pre-LN blocks, learned positions, tied embeddings) and its ONNX export.

The exported graph follows transformers.js' decoder_model_merged layout: inputs input_ids,
attention_mask [B, P+S] (int64) and past_key_values.{i}.key|value [B, H, P, Dh]; outputs logits
and present.{i}.key|value; logits hold the last position only ([B, 1, V]). Positions come from cumsum(attention_mask) - 1, so left-padded
batches score exactly like unpadded prompts.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

NEG = -1e9


class Block(nn.Module):
    def __init__(self, d, h, causal=True):
        super().__init__()
        self.h, self.causal = h, causal
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x, bias, past_k=None, past_v=None):
        B, S, D = x.shape
        h = self.h
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q = q.view(B, S, h, D // h).transpose(1, 2)
        k = k.view(B, S, h, D // h).transpose(1, 2)
        v = v.view(B, S, h, D // h).transpose(1, 2)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // h)) + bias
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, S, D)
        x = x + self.c_proj(y)
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))
        return x, k, v


class GPT(nn.Module):
    def __init__(self, vocab, n_positions, d, n_layer, n_head, causal=True):
        super().__init__()
        self.cfg = dict(vocab=vocab, n_positions=n_positions, d=d, n_layer=n_layer, n_head=n_head)
        self.causal = causal
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_positions, d)
        self.blocks = nn.ModuleList([Block(d, n_head, causal) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.apply(self._init)
        for b in self.blocks:
            nn.init.normal_(b.c_proj.weight, std=0.02 / math.sqrt(2 * n_layer))
            nn.init.normal_(b.mlp_proj.weight, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def hidden(self, ids, attention_mask=None, past=None):
        """Returns final hidden states [B,S,D] and the new key/value caches."""
        B, S = ids.shape
        if attention_mask is None:
            attention_mask = torch.ones(B, S, dtype=torch.long)
        total = attention_mask.shape[1]
        pos = (torch.cumsum(attention_mask, dim=1) - 1).clamp(min=0)[:, total - S:]
        x = self.wte(ids) + self.wpe(pos)
        keymask = attention_mask[:, None, None, :].to(x.dtype)
        bias = (1.0 - keymask) * NEG
        if self.causal:
            qpos = torch.arange(S)[:, None] + (total - S)
            kpos = torch.arange(total)[None, :]
            bias = bias + (kpos > qpos).to(x.dtype)[None, None] * NEG
        presents = []
        for i, blk in enumerate(self.blocks):
            pk, pv = (past[2 * i], past[2 * i + 1]) if past is not None else (None, None)
            x, k, v = blk(x, bias, pk, pv)
            presents += [k, v]
        return self.ln_f(x), presents

    def forward(self, ids, targets=None):
        h, _ = self.hidden(ids)
        logits = h @ self.wte.weight.t()
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


class OnnxDecoder(nn.Module):
    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids, attention_mask, *past):
        h, presents = self.gpt.hidden(input_ids, attention_mask, list(past))
        # Only the last position's logits: probing and generation read no other row, and the
        # vocabulary projection of every position was half the compute of a prefill.
        return (h[:, -1:, :] @ self.gpt.wte.weight.t(), *presents)


def export_decoder(gpt, path, opset=14):
    gpt.eval()
    L, H, D = gpt.cfg['n_layer'], gpt.cfg['n_head'], gpt.cfg['d']
    B, P, S = 2, 3, 4
    ids = torch.randint(0, gpt.cfg['vocab'], (B, S))
    mask = torch.ones(B, P + S, dtype=torch.long)
    past = [torch.randn(B, H, P, D // H) for _ in range(2 * L)]
    in_names = ['input_ids', 'attention_mask']
    out_names = ['logits']
    dyn = {'input_ids': {0: 'batch_size', 1: 'sequence_length'},
           'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'},
           'logits': {0: 'batch_size'}}
    for i in range(L):
        for kv in ('key', 'value'):
            n = f'past_key_values.{i}.{kv}'
            in_names.append(n)
            dyn[n] = {0: 'batch_size', 2: 'past_sequence_length'}
            o = f'present.{i}.{kv}'
            out_names.append(o)
            dyn[o] = {0: 'batch_size', 2: 'total_sequence_length'}
    with torch.no_grad():
        torch.onnx.export(OnnxDecoder(gpt), (ids, mask, *past), path, input_names=in_names,
                          output_names=out_names, dynamic_axes=dyn, opset_version=opset, do_constant_folding=False)
