"""`stackcheck artifact check` on a 7B-style sharded checkpoint, next to reading the same
headers with the safetensors library.

The layout is Llama-2-7B's (hidden 4096, 32 layers, 32 heads, intermediate 11008, vocab
32000: 291 tensors, bfloat16) in 4 shards with a model.safetensors.index.json and a
config.json. The shards are real safetensors headers followed by sparse data (``truncate``:
13.5 GB apparent, nothing written), so neither side can be reading tensors.

Measured side by side in one run, interleaved (these machines are noisy; compare ratios):

  in process
    check        stackcheck.artifacts.check(DIR): every header, index, shapes vs config,
                 tie, dtype, wrapper names, the pickle walk
    headers      stackcheck.artifacts.read_header over the 4 shards
    safe_open    safetensors.safe_open(shard, "np") over the 4 shards, every key's dtype and
                 shape (get_slice), the library's own header reader
  as processes
    cli          `stackcheck artifact check DIR`
    safe_open    `python -c "from safetensors import safe_open; ..."` over the same shards
    python       `python -c pass`

Budget (issue 16): the check of the 7B layout well under a second.

    python benchmarks/bench_artifact.py [--runs 30] [--force]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import Bench, bench_arguments, interleave, time_commands  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def tensors() -> dict[str, list[int]]:
    h, i, v = CONFIG["hidden_size"], CONFIG["intermediate_size"], CONFIG["vocab_size"]
    out = {"model.embed_tokens.weight": [v, h]}
    for n in range(CONFIG["num_hidden_layers"]):
        p = f"model.layers.{n}."
        out |= {
            p + "self_attn.q_proj.weight": [h, h],
            p + "self_attn.k_proj.weight": [h, h],
            p + "self_attn.v_proj.weight": [h, h],
            p + "self_attn.o_proj.weight": [h, h],
            p + "mlp.gate_proj.weight": [i, h],
            p + "mlp.up_proj.weight": [i, h],
            p + "mlp.down_proj.weight": [h, i],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
    out |= {"model.norm.weight": [h], "lm_head.weight": [v, h]}
    return out


def write_shard(path: Path, shard: dict[str, list[int]]) -> None:
    header: dict = {"__metadata__": {"format": "pt"}}
    at = 0
    for name, shape in shard.items():
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [at, at + n]}
        at += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as fh:
        fh.write(len(raw).to_bytes(8, "little") + raw)
        fh.truncate(8 + len(raw) + at)  # sparse: no tensor data on disk


def build(root: Path, shards: int = 4) -> list[Path]:
    names = list(tensors().items())
    per = -(-len(names) // shards)
    weight_map, files = {}, []
    for k in range(shards):
        fname = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = dict(names[k * per : (k + 1) * per])
        write_shard(root / fname, part)
        weight_map |= {t: fname for t in part}
        files.append(root / fname)
    (root / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (root / "config.json").write_text(json.dumps(CONFIG))
    return files


SAFE_OPEN = (
    "import sys\nfrom safetensors import safe_open\n"
    "for p in sys.argv[1:]:\n"
    "    with safe_open(p, 'np') as f:\n"
    "        [(f.get_slice(k).get_dtype(), f.get_slice(k).get_shape()) for k in f.keys()]\n"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bench_arguments(parser, runs=30)
    args = parser.parse_args()
    from safetensors import safe_open

    from stackcheck.artifacts import check, read_header

    root = Path(tempfile.mkdtemp(prefix="bench-artifact-"))
    try:
        files = build(root)
        count = sum(len(read_header(f).tensors) for f in files)
        size = sum(f.stat().st_size for f in files)
        print(f"layout: {count} tensors in {len(files)} shards, {size / 1e9:.1f} GB apparent (sparse)")
        report = check(root)
        assert report.verdict == "ok", [c for c in report.checks if c.verdict != "ok"]

        def ours(_i):
            check(root)

        def headers(_i):
            for f in files:
                read_header(f)

        def theirs(_i):
            for f in files:
                with safe_open(str(f), "np") as st:
                    [(st.get_slice(k).get_dtype(), st.get_slice(k).get_shape()) for k in st.keys()]  # noqa: SIM118

        bench = Bench(force=args.force)
        res = interleave({"check": ours, "headers": headers, "safe_open": theirs}, args.runs, bench)
        print("in process (medians):")
        for label, r in res.items():
            print(
                f"  {label:<10} {r['median'] * 1000:8.2f} ms  [{r['min'] * 1000:.2f}-{r['max'] * 1000:.2f}]"
            )
        base = res["safe_open"]["median"]
        print(
            bench.budget_line(
                "headers / safe_open", res["headers"]["median"] / base, ("headers", "safe_open")
            )
        )
        print(bench.budget_line("check / safe_open", res["check"]["median"] / base, ("check", "safe_open")))
        py = sys.executable
        stackcheck = str(Path(py).with_name("stackcheck"))
        cmds = {
            "cli": [stackcheck, "artifact", "check", str(root)],
            "safe_open": [py, "-c", SAFE_OPEN, *map(str, files)],
            "python": [py, "-c", "pass"],
        }
        procs = time_commands(cmds, max(5, args.runs // 3), env=dict(os.environ), bench=bench)
        print("as processes (wall medians):")
        for label, r in procs.items():
            print(
                f"  {label:<10} {r['wall'] * 1000:8.1f} ms  "
                f"[{r['wall_min'] * 1000:.0f}-{r['wall_max'] * 1000:.0f}]"
            )
        cli = procs["cli"]["wall"]
        print(
            bench.line(
                "cli wall",
                f"{cli * 1000:.0f} ms",
                ("cli",),
                "budget: well under 1 s",
                passes=cli < 1.0,
            )
        )
        print(
            bench.budget_line(
                "cli / safe_open process", cli / procs["safe_open"]["wall"], ("cli", "safe_open")
            )
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bench.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
