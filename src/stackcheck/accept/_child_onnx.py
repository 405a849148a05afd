"""Acceptance child (ACC008), run with ``python -c`` inside the checked interpreter: a tiny
torch model exported with ``torch.onnx.export`` (the TorchScript exporter, which needs no
onnxscript), checked with ``onnx.checker`` and run in an onnxruntime CPU session against the
torch output. Prints one JSON object on its last stdout line; stackcheck need not be
installed there.  ``python -c SOURCE WORKDIR``"""

import json
import os
import sys


def main(workdir):
    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
        import torch
    except ModuleNotFoundError as exc:
        return {"missing": exc.name or "onnx"}
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).eval()
    x = torch.randn(3, 8)
    path = os.path.join(workdir, "tiny.onnx")
    opset = 17
    try:
        torch.onnx.export(
            model, (x,), path, input_names=["x"], output_names=["y"], opset_version=opset, dynamo=False
        )
    except TypeError:  # a torch from before the dynamo= argument
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=opset)
    onnx.checker.check_model(onnx.load(path))
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy()})[0]
    with torch.no_grad():
        want = model(x).numpy()
    return {
        "max_abs_diff": float(np.max(np.abs(got - want))),
        "opset": opset,
        "bytes": os.path.getsize(path),
        "torch": torch.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "providers": ort.get_available_providers(),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
