"""Acceptance children (ACC002–ACC004), run with ``python -c`` inside the checked
interpreter: ``MODE WORKDIR CONFIG_JSON`` on the command line, one JSON object on the last
stdout line. Standard library + torch (+ safetensors for save/load) only. The model is
built from the config with a fixed seed, so two processes build the same architecture."""

import json
import os
import sys


def _imports(*names):
    """The modules, or {"missing": [NAME, …]}: every top-level package that is not installed."""
    import importlib
    import importlib.util

    tops = list(dict.fromkeys(name.split(".")[0] for name in names))
    missing = [top for top in tops if importlib.util.find_spec(top) is None]
    if missing:
        return {"missing": missing}
    return [importlib.import_module(name) for name in names]


def build(cfg, seed):
    import torch
    from torch import nn

    class Tiny(nn.Module):
        """One transformer encoder block and a linear head."""

        def __init__(self):
            super().__init__()
            self.block = nn.TransformerEncoderLayer(
                cfg["d_model"], cfg["n_heads"], cfg["d_ff"], dropout=0.0, batch_first=True
            )
            self.head = nn.Linear(cfg["d_model"], cfg["d_out"])

        def forward(self, x):
            return self.head(self.block(x).mean(dim=1))

    torch.manual_seed(seed)
    return Tiny()


def _inputs(cfg, seed):
    import torch

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(cfg["batch"], cfg["seq"], cfg["d_model"], generator=g)
    y = torch.randn(cfg["batch"], cfg["d_out"], generator=g)
    return x, y


def train(cfg, workdir):
    got = _imports("torch")
    if isinstance(got, dict):
        return got
    (torch,) = got
    model = build(cfg, cfg["seed"])
    x, y = _inputs(cfg, cfg["seed"] + 1)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    losses, finite = [], True
    grad_norm = 0.0
    for _ in range(cfg["steps"]):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        finite = finite and all(bool(torch.isfinite(g).all()) for g in grads)
        grad_norm = float(torch.norm(torch.stack([g.norm() for g in grads])))
        opt.step()
        losses.append(loss.item())
    return {
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "parameters": sum(p.numel() for p in model.parameters()),
        "losses": losses,
        "grads_finite": finite,
        "last_grad_norm": grad_norm,
        "threads": torch.get_num_threads(),
    }


def gpu(cfg, workdir):
    got = _imports("torch")
    if isinstance(got, dict):
        return got
    (torch,) = got
    facts = {
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "hip_build": getattr(torch.version, "hip", None),
    }
    if torch.cuda.is_available():
        device = "cuda"
        facts["device_name"] = torch.cuda.get_device_name(0)
        facts["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
        facts["arch_list"] = torch.cuda.get_arch_list()
        torch.backends.cuda.matmul.allow_tf32 = False  # compare true fp32 products
        torch.backends.cudnn.allow_tf32 = False
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        device = "mps"
        facts["device_name"] = "Apple MPS"
    else:
        facts["device"] = None
        facts["device_count"] = torch.cuda.device_count() if torch.version.cuda else 0
        return facts
    facts["device"] = device
    g = torch.Generator().manual_seed(cfg["seed"])
    n = cfg["gpu_n"]
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    on_cpu = a @ b
    try:
        on_device = (a.to(device) @ b.to(device)).cpu()
    except RuntimeError as exc:  # "no kernel image is available for execution on the device" …
        facts["error"] = str(exc).strip().splitlines()[0]
        return facts
    facts["max_abs_diff"] = float((on_cpu - on_device).abs().max())
    facts["max_abs"] = float(on_cpu.abs().max())
    facts["finite"] = bool(torch.isfinite(on_device).all())
    facts["n"] = n
    return facts


def save(cfg, workdir):
    got = _imports("torch", "safetensors.torch")
    if isinstance(got, dict):
        return got
    torch, st = got
    model = build(cfg, cfg["seed"]).eval()
    x, _ = _inputs(cfg, cfg["seed"] + 2)
    with torch.no_grad():
        out = model(x)
    weights = os.path.join(workdir, "model.safetensors")
    st.save_file({k: v.contiguous() for k, v in model.state_dict().items()}, weights)
    st.save_file({"input": x, "output": out}, os.path.join(workdir, "io.safetensors"))
    import safetensors

    return {
        "torch": torch.__version__,
        "safetensors": safetensors.__version__,
        "file": weights,
        "bytes": os.path.getsize(weights),
        "tensors": len(model.state_dict()),
    }


def load(cfg, workdir):
    got = _imports("torch", "safetensors.torch")
    if isinstance(got, dict):
        return got
    torch, st = got
    model = build(cfg, cfg["seed"] + 1000).eval()  # other weights until the file replaces them
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = st.load_file(os.path.join(workdir, "model.safetensors"))
    model.load_state_dict(state, strict=True)
    replaced = sum(not torch.equal(before[k], v) for k, v in model.state_dict().items())
    io = st.load_file(os.path.join(workdir, "io.safetensors"))
    with torch.no_grad():
        out = model(io["input"])
    return {
        "identical": bool(torch.equal(out, io["output"])),
        "max_abs_diff": float((out - io["output"]).abs().max()),
        "tensors": len(state),
        "tensors_replaced": replaced,
    }


if __name__ == "__main__":
    mode, workdir, cfg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    print(json.dumps({"train": train, "gpu": gpu, "save": save, "load": load}[mode](cfg, workdir)))
