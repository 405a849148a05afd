"""Build the recorded snapshots in this directory from compact machine descriptions.

Run ``python tests/data/snapshots/_make_snapshots.py`` after editing; it rewrites every
``*.json`` here and validates each one against the Snapshot contract. Keeping the machines
as code keeps the shared stacks (torch's Requires-Dist, the nvidia-* runtime wheels,
transformers' bounds) identical across files, so a check that differs between two
snapshots differs because the machines differ.

Version strings and Requires-Dist lines mirror real wheel METADATA (torch 2.13.0 from the
wheel itself; torch 2.3/2.8 and the nvidia pins from /work/shared/reference/compat
torch_pypi_default_cuda.json; transformers bounds from transformers_pins.json; vLLM
0.11.0 from vllm_pins.json).
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

HERE = Path(__file__).resolve().parent
LINUX_X86 = 'platform_system == "Linux" and platform_machine == "x86_64"'
GIB = 1024**3


# ---------------------------------------------------------------- distributions
def dist(name, version, requires=(), top_level=None, tags=("py3-none-any",), **extra):
    """One installed distribution; ``location`` is filled in by :func:`install`."""
    module = name.lower().replace("-", "_")
    return {
        "name": name,
        "version": version,
        "requires": list(requires),
        "top_level": list(top_level) if top_level is not None else [module],
        "wheel_tags": list(tags),
        **extra,
    }


def install(site: str, dists: list[dict], installer: str = "pip") -> list[dict]:
    out = []
    for d in dists:
        d = dict(d)
        d["location"] = d.pop("location", site)
        stem = d["name"].replace("-", "_")
        d.setdefault("metadata_dir", f"{d['location']}/{stem}-{d['version']}.dist-info")
        d.setdefault("installer", installer)
        out.append(d)
    return out


def common_py_deps(cp: str) -> list[dict]:
    """What any requests/jinja/sympy-using stack pulls in."""
    abi = f"{cp}-{cp}-manylinux_2_17_x86_64"
    return [
        dist("filelock", "3.20.0"),
        dist("typing_extensions", "4.15.0"),
        dist("sympy", "1.14.0", ["mpmath<1.4,>=1.1.0"]),
        dist("mpmath", "1.3.0"),
        dist("networkx", "3.5"),
        dist("Jinja2", "3.1.6", ["MarkupSafe>=2.0"], top_level=["jinja2"]),
        dist("MarkupSafe", "3.0.3", top_level=["markupsafe"], tags=(abi,)),
        dist("fsspec", "2025.9.0"),
        dist("setuptools", "80.9.0", top_level=["_distutils_hack", "pkg_resources", "setuptools"]),
        dist("pip", "25.2"),
        dist("packaging", "25.0"),
        dist("PyYAML", "6.0.3", top_level=["_yaml", "yaml"], tags=(abi,)),
        dist("regex", "2025.9.18", tags=(abi,)),
        dist(
            "requests",
            "2.32.5",
            ["charset_normalizer<4,>=2", "idna<4,>=2.5", "urllib3<3,>=1.21.1", "certifi>=2017.4.17"],
        ),
        dist("certifi", "2025.10.5"),
        dist("charset-normalizer", "3.4.4", tags=(abi,)),
        dist("idna", "3.11"),
        dist("urllib3", "2.5.0"),
        dist("tqdm", "4.67.1", ['colorama; platform_system == "Windows"']),
        dist("psutil", "7.1.0", tags=("cp36-abi3-manylinux_2_17_x86_64",)),
    ]


# ------------------------------------------------------------------- torch builds
def nvidia_cu12(pins: dict[str, str]) -> tuple[list[str], list[dict]]:
    """Requires-Dist lines of a cu12 torch wheel and the runtime wheels they install."""
    reqs = [f"{n}=={v}; {LINUX_X86}" for n, v in pins.items()]
    top = {"nvidia-cusparselt-cu12": ["cusparselt"]}
    dists = [
        dist(n, v, top_level=top.get(n, ["nvidia"]), tags=("py3-none-manylinux_2_27_x86_64",))
        for n, v in pins.items()
    ]
    return reqs, dists


CU126_PINS = {  # torch 2.8.0+cu126
    "nvidia-cuda-nvrtc-cu12": "12.6.77",
    "nvidia-cuda-runtime-cu12": "12.6.77",
    "nvidia-cuda-cupti-cu12": "12.6.80",
    "nvidia-cudnn-cu12": "9.10.2.21",
    "nvidia-cublas-cu12": "12.6.4.1",
    "nvidia-cufft-cu12": "11.3.0.4",
    "nvidia-curand-cu12": "10.3.7.77",
    "nvidia-cusolver-cu12": "11.7.1.2",
    "nvidia-cusparse-cu12": "12.5.4.2",
    "nvidia-cusparselt-cu12": "0.7.1",
    "nvidia-nccl-cu12": "2.27.3",
    "nvidia-nvtx-cu12": "12.6.77",
    "nvidia-nvjitlink-cu12": "12.6.85",
    "nvidia-cufile-cu12": "1.11.1.6",
}
CU128_PINS = {  # torch 2.8.0 (PyPI default = cu128)
    "nvidia-cuda-nvrtc-cu12": "12.8.93",
    "nvidia-cuda-runtime-cu12": "12.8.90",
    "nvidia-cuda-cupti-cu12": "12.8.90",
    "nvidia-cudnn-cu12": "9.10.2.21",
    "nvidia-cublas-cu12": "12.8.4.1",
    "nvidia-cufft-cu12": "11.3.3.83",
    "nvidia-curand-cu12": "10.3.9.90",
    "nvidia-cusolver-cu12": "11.7.3.90",
    "nvidia-cusparse-cu12": "12.5.8.93",
    "nvidia-cusparselt-cu12": "0.7.1",
    "nvidia-nccl-cu12": "2.27.3",
    "nvidia-nvtx-cu12": "12.8.90",
    "nvidia-nvjitlink-cu12": "12.8.93",
    "nvidia-cufile-cu12": "1.13.1.3",
}
CU121_PINS = {  # torch 2.3.1+cu121
    "nvidia-cuda-nvrtc-cu12": "12.1.105",
    "nvidia-cuda-runtime-cu12": "12.1.105",
    "nvidia-cuda-cupti-cu12": "12.1.105",
    "nvidia-cudnn-cu12": "8.9.2.26",
    "nvidia-cublas-cu12": "12.1.3.1",
    "nvidia-cufft-cu12": "11.0.2.54",
    "nvidia-curand-cu12": "10.3.2.106",
    "nvidia-cusolver-cu12": "11.4.5.107",
    "nvidia-cusparse-cu12": "12.1.0.106",
    "nvidia-nccl-cu12": "2.20.5",
    "nvidia-nvtx-cu12": "12.1.105",
}

TORCH_BASE_REQS = [
    "filelock",
    "typing-extensions>=4.10.0",
    'setuptools; python_version >= "3.12"',
    "sympy>=1.13.3",
    "networkx",
    "jinja2",
    "fsspec",
]
TORCH_EXTRAS = [
    'optree>=0.13.0; extra == "optree"',
    'opt-einsum>=3.3; extra == "opt-einsum"',
    'pyyaml; extra == "pyyaml"',
]
TORCH_TOP = ["functorch", "torch", "torchgen"]


def torch_28(cp: str, local: str, pins: dict[str, str]) -> list[dict]:
    reqs, runtime = nvidia_cu12(pins)
    torch = dist(
        "torch",
        f"2.8.0+{local}",
        TORCH_BASE_REQS + reqs + [f"triton==3.4.0; {LINUX_X86}"] + TORCH_EXTRAS,
        top_level=TORCH_TOP,
        tags=(f"{cp}-{cp}-manylinux_2_28_x86_64",),
        requires_python=">=3.9.0",
        provides_extras=["optree", "opt-einsum", "pyyaml"],
    )
    triton = dist(
        "triton",
        "3.4.0",
        ["setuptools>=40.8.0", 'importlib-metadata; python_version < "3.10"'],
        tags=(f"{cp}-{cp}-manylinux_2_27_x86_64",),
    )
    vision = dist(
        "torchvision",
        f"0.23.0+{local}",
        ["numpy", "torch==2.8.0", "pillow!=8.3.*,>=5.3.0"],
        tags=(f"{cp}-{cp}-manylinux_2_28_x86_64",),
    )
    audio = dist("torchaudio", f"2.8.0+{local}", ["torch==2.8.0"], tags=(f"{cp}-{cp}-manylinux_2_28_x86_64",))
    return [
        torch,
        triton,
        vision,
        audio,
        dist("pillow", "11.3.0", top_level=["PIL"], tags=(f"{cp}-{cp}-manylinux_2_27_x86_64",)),
    ] + runtime


def torch_213(cp: str, cuda: bool) -> list[dict]:
    """torch 2.13.0: the +cpu wheel's METADATA verbatim; the PyPI (cu130) wheel adds cuda-toolkit."""
    cuda_reqs = [
        "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,"
        f"cusparse,nvjitlink,nvrtc,nvtx]==13.0.3; {LINUX_X86}",
        f"cuda-bindings<14,>=13.0.3; {LINUX_X86}",
        f"nvidia-cudnn-cu13==9.20.0.48; {LINUX_X86}",
        f"nvidia-nccl-cu13==2.29.7; {LINUX_X86}",
        f"triton==3.7.1; {LINUX_X86}",
    ]
    base = [
        "filelock",
        "typing-extensions>=4.10.0",
        "setuptools>=77.0.3",
        "sympy>=1.13.3",
        "networkx>=2.5.1",
        "jinja2",
        "fsspec>=0.8.5",
    ]
    torch = dist(
        "torch",
        "2.13.0" if cuda else "2.13.0+cpu",
        base + (cuda_reqs if cuda else []) + TORCH_EXTRAS,
        top_level=TORCH_TOP,
        tags=(f"{cp}-{cp}-manylinux_2_28_x86_64",),
        requires_python=">=3.10",
        provides_extras=["optree", "opt-einsum", "pyyaml"],
    )
    out = [torch]
    if cuda:
        comps = {  # cuda-toolkit extra -> the CUDA 13 component wheel it installs
            "cudart": ("nvidia-cuda-runtime", "13.0.96"),
            "cublas": ("nvidia-cublas", "13.1.0.3"),
            "cufft": ("nvidia-cufft", "12.0.0.61"),
            "cufile": ("nvidia-cufile", "1.15.1.6"),
            "cupti": ("nvidia-cuda-cupti", "13.0.85"),
            "curand": ("nvidia-curand", "10.4.0.35"),
            "cusolver": ("nvidia-cusolver", "12.0.4.66"),
            "cusparse": ("nvidia-cusparse", "12.6.3.3"),
            "nvjitlink": ("nvidia-nvjitlink", "13.0.88"),
            "nvrtc": ("nvidia-cuda-nvrtc", "13.0.88"),
            "nvtx": ("nvidia-nvtx", "13.0.85"),
        }
        toolkit_reqs = [f'{n}=={v}; extra == "{extra}"' for extra, (n, v) in comps.items()]
        out += [
            dist("cuda-toolkit", "13.0.3", toolkit_reqs, top_level=[], provides_extras=sorted(comps)),
            dist(
                "cuda-bindings",
                "13.0.3",
                ["cuda-pathfinder~=1.1"],
                top_level=["cuda"],
                tags=(f"{cp}-{cp}-manylinux_2_24_x86_64",),
            ),
            dist("cuda-pathfinder", "1.3.0", top_level=["cuda"]),
            dist(
                "nvidia-cudnn-cu13",
                "9.20.0.48",
                ["nvidia-cublas"],
                top_level=["nvidia"],
                tags=("py3-none-manylinux_2_27_x86_64",),
            ),
            dist(
                "nvidia-nccl-cu13", "2.29.7", top_level=["nvidia"], tags=("py3-none-manylinux_2_18_x86_64",)
            ),
            dist("triton", "3.7.1", tags=(f"{cp}-{cp}-manylinux_2_27_x86_64",)),
        ]
        out += [
            dist(n, v, top_level=["nvidia"], tags=("py3-none-manylinux_2_17_x86_64",))
            for n, v in comps.values()
        ]
    return out


def torch_231_cu121(cp: str) -> list[dict]:
    reqs = [f"{n} =={v} ; {LINUX_X86}" for n, v in CU121_PINS.items()]
    torch = dist(
        "torch",
        "2.3.1+cu121",
        [
            "filelock",
            "typing-extensions >=4.8.0",
            "sympy",
            "networkx",
            "jinja2",
            "fsspec",
            'mkl <=2021.4.0 ; platform_system == "Windows"',
        ]
        + reqs
        + [
            f'triton ==2.3.1 ; {LINUX_X86} and python_version < "3.12"',
            'opt-einsum >=3.3 ; extra == "opt-einsum"',
            'optree >=0.9.1 ; extra == "optree"',
        ],
        top_level=TORCH_TOP,
        tags=(f"{cp}-{cp}-linux_x86_64",),
        requires_python=">=3.8.0",
        provides_extras=["opt-einsum", "optree"],
    )
    runtime = [
        dist(n, v, top_level=["nvidia"], tags=("py3-none-manylinux1_x86_64",)) for n, v in CU121_PINS.items()
    ]
    runtime.append(
        dist(
            "nvidia-nvjitlink-cu12", "12.9.86", top_level=["nvidia"], tags=("py3-none-manylinux2010_x86_64",)
        )
    )
    vision = dist(
        "torchvision",
        "0.18.1+cu121",
        ["numpy", "torch ==2.3.1", "pillow !=8.3.*,>=5.3.0"],
        tags=(f"{cp}-{cp}-linux_x86_64",),
    )
    return [
        torch,
        dist("triton", "2.3.1", ["filelock"], tags=(f"{cp}-{cp}-manylinux_2_17_x86_64",)),
        vision,
        dist("pillow", "10.4.0", top_level=["PIL"]),
    ] + runtime


# --------------------------------------------------------------------- HF stacks
def hf_2025(cp: str) -> list[dict]:
    """transformers 4.57.1 era (torch 2.8 machines)."""
    abi = f"{cp}-{cp}-manylinux_2_17_x86_64"
    return [
        dist(
            "transformers",
            "4.57.1",
            [
                "filelock",
                "huggingface-hub<1.0,>=0.34.0",
                "numpy>=1.17",
                "packaging>=20.0",
                "pyyaml>=5.1",
                "regex!=2019.12.17",
                "requests",
                "tokenizers<=0.23.0,>=0.22.0",
                "safetensors>=0.4.3",
                "tqdm>=4.27",
                'torch>=2.2; extra == "torch"',
                'accelerate>=0.26.0; extra == "torch"',
            ],
            requires_python=">=3.9.0",
            provides_extras=["torch", "accelerate"],
        ),
        dist(
            "tokenizers",
            "0.22.1",
            ["huggingface-hub<2.0,>=0.16.4"],
            tags=("cp39-abi3-manylinux_2_17_x86_64",),
        ),
        dist(
            "huggingface-hub",
            "0.35.3",
            [
                "filelock",
                "fsspec>=2023.5.0",
                "packaging>=20.9",
                "pyyaml>=5.1",
                "requests",
                "tqdm>=4.42.1",
                "typing-extensions>=3.7.4.3",
                'hf-xet<2.0.0,>=1.1.3; platform_machine == "x86_64" or platform_machine == '
                '"amd64" or platform_machine == "arm64" or platform_machine == "aarch64"',
            ],
            top_level=["huggingface_hub"],
        ),
        dist("hf-xet", "1.1.10", top_level=["hf_xet"], tags=("cp37-abi3-manylinux_2_17_x86_64",)),
        dist("safetensors", "0.6.2", tags=("cp38-abi3-manylinux_2_17_x86_64",)),
        dist(
            "accelerate",
            "1.10.1",
            [
                "numpy<3.0.0,>=1.17",
                "packaging>=20.0",
                "psutil",
                "pyyaml",
                "torch>=2.0.0",
                "huggingface_hub>=0.21.0",
                "safetensors>=0.4.3",
            ],
        ),
        dist("numpy", "2.2.6", tags=(abi,)),
    ]


def hf_2026(cp: str) -> list[dict]:
    """transformers 5.16 era (torch 2.13 machines)."""
    return [
        dist(
            "transformers",
            "5.16.0",
            [
                "huggingface-hub<2.0,>=1.5.0",
                "numpy>=1.17",
                "packaging>=20.0",
                "pyyaml>=5.1",
                "regex!=2019.12.17",
                "tokenizers<0.24.0,>=0.23.1",
                "typer-slim",
                "safetensors>=0.8.0",
                "tqdm>=4.27",
                'torch>=2.5; extra == "torch"',
                'accelerate>=1.1.0; extra == "torch"',
            ],
            requires_python=">=3.10.0",
            provides_extras=["torch", "accelerate"],
        ),
        dist(
            "tokenizers",
            "0.23.2",
            ["huggingface-hub<2.0,>=0.16.4"],
            tags=("cp310-abi3-manylinux_2_17_x86_64",),
        ),
        dist(
            "huggingface-hub",
            "1.33.0",
            [
                "filelock",
                "fsspec>=2023.5.0",
                "httpx<1,>=0.23.0",
                "packaging>=20.9",
                "pyyaml>=5.1",
                "tqdm>=4.42.1",
                "typer-slim",
                "typing-extensions>=4.1.0",
                'hf-xet<2.0.0,>=1.2.0; platform_machine == "x86_64" or platform_machine == '
                '"amd64" or platform_machine == "arm64" or platform_machine == "aarch64"',
            ],
            top_level=["huggingface_hub"],
        ),
        dist("hf-xet", "1.4.2", top_level=["hf_xet"], tags=("cp37-abi3-manylinux_2_17_x86_64",)),
        dist("httpx", "0.28.1", ["anyio", "certifi", "httpcore==1.*", "idna"]),
        dist("httpcore", "1.0.9", ["certifi", "h11>=0.16"]),
        dist("h11", "0.16.0"),
        dist(
            "anyio",
            "4.11.0",
            ["idna>=2.8", "sniffio>=1.1", 'typing_extensions>=4.5; python_version < "3.13"'],
        ),
        dist("sniffio", "1.3.1"),
        dist("typer-slim", "0.20.0", ["click>=8.0.0", "typing-extensions>=3.7.4.3"], top_level=["typer"]),
        dist("click", "8.3.0"),
        dist("safetensors", "0.8.1", tags=("cp38-abi3-manylinux_2_17_x86_64",)),
        dist(
            "accelerate",
            "1.15.0",
            [
                "numpy<3.0.0,>=1.17",
                "packaging>=20.0",
                "psutil",
                "pyyaml",
                "torch>=2.0.0",
                "huggingface_hub>=0.21.0",
                "safetensors>=0.4.3",
            ],
        ),
        dist("numpy", "2.4.6", tags=(f"{cp}-{cp}-manylinux_2_27_x86_64",)),
    ]


def datasets_stack(cp: str, version: str = "4.1.1", numpy_req: str = "numpy>=1.17") -> list[dict]:
    abi = f"{cp}-{cp}-manylinux_2_17_x86_64"
    return [
        dist(
            "datasets",
            version,
            [
                "filelock",
                numpy_req,
                "pyarrow>=21.0.0",
                "dill<0.4.1,>=0.3.0",
                "pandas",
                "requests>=2.32.2",
                "tqdm>=4.66.3",
                "xxhash",
                "multiprocess<0.70.17",
                "fsspec[http]<=2025.9.0,>=2023.1.0",
                "huggingface-hub>=0.24.0",
                "packaging",
                "pyyaml>=5.1",
            ],
        ),
        dist("pyarrow", "21.0.0", tags=(f"{cp}-{cp}-manylinux_2_28_x86_64",)),
        dist(
            "pandas",
            "2.3.3",
            [
                'numpy>=1.26.0; python_version >= "3.12"',
                "python-dateutil>=2.8.2",
                "pytz>=2020.1",
                "tzdata>=2022.7",
            ],
            tags=(abi,),
        ),
        dist("python-dateutil", "2.9.0.post0", ["six>=1.5"], top_level=["dateutil"]),
        dist("six", "1.17.0"),
        dist("pytz", "2025.2"),
        dist("tzdata", "2025.2"),
        dist("dill", "0.4.0"),
        dist("multiprocess", "0.70.16", ["dill>=0.3.8"], top_level=["_multiprocess", "multiprocess"]),
        dist("xxhash", "3.6.0", tags=(abi,)),
    ]


def pydantic_stack(cp: str) -> list[dict]:
    """pydantic 2.12 and what it pulls in (wandb's and vLLM's environments both carry it)."""
    return [
        dist(
            "pydantic",
            "2.12.2",
            [
                "annotated-types>=0.6.0",
                "pydantic-core==2.41.4",
                "typing-extensions>=4.14.1",
                "typing-inspection>=0.4.2",
            ],
        ),
        dist(
            "pydantic_core",
            "2.41.4",
            ["typing-extensions>=4.14.1"],
            tags=(f"{cp}-{cp}-manylinux_2_17_x86_64",),
        ),
        dist("annotated-types", "0.7.0", top_level=["annotated_types"]),
        dist("typing-inspection", "0.4.2", ["typing-extensions>=4.12.0"], top_level=["typing_inspection"]),
    ]


def jupyter_bits() -> list[dict]:
    """ipykernel and its runtime closure (ipython's optional pieces left out)."""
    return [
        dist(
            "ipykernel",
            "6.30.1",
            [
                "comm>=0.1.1",
                "debugpy>=1.6.5",
                "ipython>=7.23.1",
                "jupyter-client>=8.0.0",
                "tornado>=6.2",
                "traitlets>=5.4.0",
            ],
            top_level=["ipykernel", "ipykernel_launcher"],
        ),
        dist(
            "jupyter_client",
            "8.6.3",
            [
                "jupyter-core!=5.0.*,>=4.12",
                "python-dateutil>=2.8.2",
                "pyzmq>=23.0",
                "tornado>=6.2",
                "traitlets>=5.3",
            ],
        ),
        dist("jupyter_core", "5.8.1", ["platformdirs>=2.5", "traitlets>=5.3"]),
        dist(
            "ipython",
            "9.6.0",
            ["decorator", "jedi>=0.16", "pygments>=2.4.0", "traitlets>=5.13.0"],
            top_level=["IPython"],
        ),
        dist("comm", "0.2.3"),
        dist("debugpy", "1.8.17", tags=("cp312-cp312-manylinux_2_34_x86_64",)),
        dist("tornado", "6.5.2", tags=("cp39-abi3-manylinux_2_17_x86_64",)),
        dist("traitlets", "5.14.3"),
        dist("decorator", "5.2.1"),
        dist("jedi", "0.19.2", ["parso<0.9.0,>=0.8.4"]),
        dist("parso", "0.8.5"),
        dist("pygments", "2.19.2"),
        dist("pyzmq", "27.1.0", top_level=["zmq"], tags=("cp312-abi3-manylinux_2_26_x86_64",)),
        dist("platformdirs", "4.5.0"),
    ]


# --------------------------------------------------------------- machine sections
def ubuntu(
    version: str, kernel: str, cpu: str, cpus: int, mem_gib: float, shm_gib: float, glibc: str, **extra
) -> dict:
    names = {"24.04": "Ubuntu 24.04.3 LTS", "22.04": "Ubuntu 22.04.5 LTS", "20.04": "Ubuntu 20.04.6 LTS"}
    return {
        "status": "ok",
        "source": "os-release",
        "system": "Linux",
        "distro_id": "ubuntu",
        "distro_version": version,
        "distro_name": names[version],
        "kernel": kernel,
        "machine": "x86_64",
        "libc_family": "glibc",
        "libc_version": glibc,
        "cpu_model": cpu,
        "cpu_count": cpus,
        "memory_total_bytes": int(mem_gib * GIB),
        "shm_total_bytes": int(shm_gib * GIB),
        "open_files_limit": extra.pop("open_files_limit", 1048576),
        **extra,
    }


def venv_python(
    version: str,
    root: str,
    base: str,
    extra_path: list[str] = (),
    pythonpath: list[str] = (),
    kind: str = "venv",
) -> dict:
    mm = ".".join(version.split(".")[:2])
    site = f"{root}/lib/python{mm}/site-packages"
    return {
        "status": "ok",
        "source": "interpreter",
        "version": version,
        "implementation": "CPython",
        "executable": f"{root}/bin/python",
        "prefix": root,
        "base_prefix": base,
        "env_kind": kind,
        "env_marker": "pyvenv.cfg" if kind in ("venv", "uv") else f"CONDA_PREFIX={root}",
        "sys_path": [
            *pythonpath,
            f"{base}/lib/python{mm.replace('.', '')}.zip",
            f"{base}/lib/python{mm}",
            f"{base}/lib/python{mm}/lib-dynload",
            site,
            *extra_path,
        ],
        "pythonpath": list(pythonpath),
        "user_site": None,
        "user_site_enabled": False,
        "platform_tag": "linux-x86_64",
        "soabi": f"cpython-{mm.replace('.', '')}-x86_64-linux-gnu",
        "pth_files": [],
        "site_dirs": [site],
    }


def nvidia(driver: str, cuda: str, gpus: list[dict], source: str = "sysfs", cvd: str | None = None) -> dict:
    return {
        "status": "ok",
        "source": "nvml",
        "vendor": "nvidia",
        "driver_version": driver,
        "driver_source": source,
        "cuda_driver_version": cuda,
        "gpus": gpus,
        "cuda_visible_devices": cvd,
        "looked_for": [],
    }


def gpu(
    i: int,
    name: str,
    mem_mib: int,
    cc: str,
    uuid_tail: str,
    mig: str | None = "disabled",
    visible: bool = True,
) -> dict:
    return {
        "index": i,
        "name": name,
        "uuid": f"GPU-{uuid_tail}",
        "memory_total_bytes": mem_mib * 1024 * 1024,
        "compute_capability": cc,
        "mig_mode": mig,
        "visible": visible,
    }


def torch_section(version: str, cuda: str | None, site: str, git: str) -> dict:
    return {
        "status": "ok",
        "source": "torch/version.py",
        "version": version,
        "cuda": cuda,
        "hip": None,
        "git_version": git,
        "location": f"{site}/torch",
    }


NO_GPU = {
    "status": "absent",
    "source": "sysfs+nvml",
    "looked_for": [
        "/sys/module/nvidia/version",
        "/proc/driver/nvidia/version",
        "NVML (libnvidia-ml.so.1): nvidia-ml-py not installed",
        "/dev/kfd (ROCm)",
    ],
}


def env(vars_: dict[str, str], redacted: list[str] = ()) -> dict:
    v = dict(vars_)
    for name in redacted:
        v[name] = "<redacted>"
    return {"status": "ok", "source": "os.environ", "variables": v, "redacted": sorted(redacted)}


def kernels(*specs: dict, data_dirs: list[str]) -> dict:
    return {
        "status": "ok" if specs else "absent",
        "source": "kernelspec dirs",
        "kernels": list(specs),
        "data_dirs": data_dirs,
    }


def jupyter_dirs(home: str, prefix: str) -> list[str]:
    """Jupyter's data path for a user's home and an environment prefix (Linux)."""
    return [
        f"{home}/.local/share/jupyter",
        f"{prefix}/share/jupyter",
        "/usr/local/share/jupyter",
        "/usr/share/jupyter",
    ]


def kernelspec(name: str, dirpath: str, argv0: str, resolved: str, display: str, exists: bool = True) -> dict:
    return {
        "name": name,
        "path": f"{dirpath}/kernels/{name}/kernel.json",
        "display_name": display,
        "language": "python",
        "argv": [argv0, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "interpreter": resolved,
        "interpreter_exists": exists,
        "bare_python": "/" not in argv0,
    }


def toolchain(nvcc: tuple[str, str] | None, gcc: tuple[str, str]) -> dict:
    return {
        "status": "ok",
        "source": "files+subprocess",
        "nvcc": {
            "path": nvcc[0],
            "version": nvcc[1],
            "note": "system CUDA toolkit; torch uses its own bundled runtime",
        }
        if nvcc
        else None,
        "gcc": {"path": gcc[0], "version": gcc[1], "note": ""},
    }


def git(root: str, commit: str, branch: str, dirty: bool) -> dict:
    return {"status": "ok", "source": "git", "root": root, "commit": commit, "branch": branch, "dirty": dirty}


def snapshot(
    name: str,
    captured: str,
    *,
    python: dict,
    dists: list[dict],
    platform: dict,
    hosted: list[dict] = (),
    accelerators: dict = NO_GPU,
    torch: dict,
    toolchain_: dict,
    kernels_: dict,
    env_: dict,
    git_: dict | None = None,
    engines_: list[dict] | None = None,
) -> dict:
    seen = [(d["name"].lower().replace("_", "-"), d["location"]) for d in dists]
    dupes = {k for k in seen if seen.count(k) > 1}
    assert not dupes, f"{name}: listed twice: {sorted(dupes)}"
    return {
        "schema_version": "1.0",
        "tool": {
            "name": "stackcheck",
            "version": "0.1.0",
            "schema_version": "1.0",
            "captured_at": captured,
            "command": "live",
        },
        "python": python,
        "packages": {
            "status": "ok",
            "source": "metadata",
            "distributions": sorted(dists, key=lambda d: (d["name"].lower(), d["location"])),
            "stray_entries": [],
        },
        "platform": platform,
        "hosted": {"status": "ok" if hosted else "absent", "source": "env+files", "platforms": list(hosted)},
        "accelerators": accelerators,
        "torch": torch,
        "toolchain": toolchain_,
        "kernels": kernels_,
        "env": env_,
        "git": git_ or {"status": "absent", "source": "git", "error": "not inside a git repository"},
        # the engines section came after these machines were recorded, except where it is given
        "engines": (
            {"status": "ok", "source": "metadata+subprocess", "engines": engines_}
            if engines_
            else {"status": "absent", "source": "not-probed"}
        ),
    }


# -------------------------------------------------------------------- machines
def cpu_laptop() -> dict:
    root, base = "/home/ana/thesis/.venv", "/usr"
    site = f"{root}/lib/python3.12/site-packages"
    dists = install(
        site,
        common_py_deps("cp312")
        + torch_213("cp312", cuda=False)
        + hf_2026("cp312")
        + datasets_stack("cp312", "5.0.1", "numpy>=1.17")
        + jupyter_bits(),
        "uv",
    )
    return snapshot(
        "cpu-laptop",
        "2026-11-27T14:03:11Z",
        python=venv_python("3.12.3", root, base),
        dists=dists,
        platform=ubuntu(
            "24.04",
            "6.8.0-85-generic",
            "11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz",
            8,
            15.4,
            7.7,
            "2.39",
            open_files_limit=1024,
        ),
        torch=torch_section("2.13.0+cpu", None, site, "cf30153c4c131c8164ee7798e5022d810682e2cb"),
        toolchain_=toolchain(None, ("/usr/bin/gcc", "13.3.0")),
        kernels_=kernels(
            kernelspec(
                "thesis",
                "/home/ana/.local/share/jupyter",
                f"{root}/bin/python",
                f"{root}/bin/python",
                "Python (thesis)",
            ),
            data_dirs=jupyter_dirs("/home/ana", root),
        ),
        env_=env(
            {
                "PATH": f"{root}/bin:/home/ana/.local/bin:/usr/local/bin:/usr/bin:/bin",
                "VIRTUAL_ENV": root,
                "UV_PYTHON": "3.12",
                "HF_HOME": "/home/ana/.cache/huggingface",
            },
            ["HF_TOKEN"],
        ),
        git_=git("/home/ana/thesis", "4f1c2e9a7b3d8e6f0a1b2c3d4e5f60718293a4b5", "main", True),
    )


def colab_t4() -> dict:
    site = "/usr/local/lib/python3.12/dist-packages"
    py = venv_python("3.12.12", "/usr", "/usr", kind="system")
    py.update(
        executable="/usr/bin/python3",
        env_marker="no pyvenv.cfg, no CONDA_PREFIX",
        sys_path=[
            "/content",
            "/env/python",
            "/usr/lib/python312.zip",
            "/usr/lib/python3.12",
            "/usr/lib/python3.12/lib-dynload",
            "",
            site,
            "/usr/lib/python3/dist-packages",
        ],
        pythonpath=["/env/python"],
        site_dirs=[site, "/usr/lib/python3/dist-packages"],
    )
    dists = install(
        site,
        common_py_deps("cp312")
        + torch_28("cp312", "cu126", CU126_PINS)
        + hf_2025("cp312")
        + datasets_stack("cp312")
        + jupyter_bits(),
    )
    return snapshot(
        "colab-t4",
        "2026-11-26T09:41:52Z",
        python=py,
        dists=dists,
        platform=ubuntu("22.04", "6.6.105+", "Intel(R) Xeon(R) CPU @ 2.00GHz", 2, 12.7, 5.8, "2.35"),
        hosted=[
            {"name": "colab", "signal": "COLAB_RELEASE_TAG is set", "gpu_expected": True},
            {"name": "docker", "signal": "/.dockerenv exists", "gpu_expected": None},
        ],
        accelerators=nvidia(
            "550.54.15",
            "12.4",
            [gpu(0, "Tesla T4", 15360, "7.5", "8d6a7e2b-4c1f-6d3e-9a0b-5f2c1e7d3a94", mig=None)],
            source="procfs",
        ),
        torch=torch_section("2.8.0+cu126", "12.6", site, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
        toolchain_=toolchain(("/usr/local/cuda/bin/nvcc", "12.5.82"), ("/usr/bin/gcc", "11.4.0")),
        kernels_=kernels(
            data_dirs=["/root/.local/share/jupyter", "/usr/local/share/jupyter", "/usr/share/jupyter"]
        ),
        env_=env(
            {
                "COLAB_RELEASE_TAG": "release-colab_20251120-060052_RC00",
                "COLAB_GPU": "1",
                "PATH": "/opt/bin:/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:"
                "/usr/sbin:/usr/bin:/sbin:/bin:/tools/node/bin:/tools/google-cloud-sdk/bin",
                "LD_LIBRARY_PATH": "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
                "PYTHONPATH": "/env/python",
                "NVIDIA_VISIBLE_DEVICES": "all",
                "CUDA_VERSION": "12.5.1",
                "TF_FORCE_GPU_ALLOW_GROWTH": "true",
                "TF_CPP_MIN_LOG_LEVEL": "1",
            }
        ),
    )


def training_venv(cp: str, root: str) -> tuple[str, list[dict]]:
    site = f"{root}/lib/python3.12/site-packages"
    return site, install(
        site,
        common_py_deps(cp)
        + torch_28(cp, "cu128", CU128_PINS)
        + hf_2025(cp)
        + datasets_stack(cp)
        + [
            dist(
                "peft",
                "0.17.1",
                [
                    "numpy>=1.17",
                    "packaging>=20.0",
                    "psutil",
                    "pyyaml",
                    "torch>=1.13.0",
                    "transformers",
                    "tqdm",
                    "accelerate>=0.21.0",
                    "safetensors",
                    "huggingface_hub>=0.25.0",
                ],
            ),
            dist(
                "wandb",
                "0.22.2",
                [
                    "click!=8.0.0,>=7.1",
                    "packaging",
                    "protobuf!=4.21.0,!=5.28.0,<7,>=3.19.0",
                    "pydantic<3",
                    "requests<3,>=2.0.0",
                    "sentry-sdk>=2.0.0",
                ],
                tags=("py3-none-manylinux_2_17_x86_64",),
            ),
            dist("protobuf", "6.32.1", top_level=["google"], tags=("cp39-abi3-manylinux2014_x86_64",)),
            *pydantic_stack(cp),
            dist("sentry-sdk", "2.42.0", ["urllib3>=1.26.11", "certifi"], top_level=["sentry_sdk"]),
            dist("click", "8.3.0"),
        ],
    )


def h100_single() -> dict:
    root = "/home/ml/llm-train/.venv"
    site, dists = training_venv("cp312", root)
    return snapshot(
        "h100-single",
        "2026-11-20T18:22:07Z",
        python=venv_python("3.12.11", root, "/usr"),
        dists=dists,
        platform=ubuntu(
            "22.04", "5.15.0-153-generic", "AMD EPYC 9454 48-Core Processor", 48, 503.7, 251.8, "2.35"
        ),
        accelerators=nvidia(
            "570.172.08",
            "12.8",
            [gpu(0, "NVIDIA H100 80GB HBM3", 81559, "9.0", "5b2e1f7c-93d4-8a0e-6c1b-2f4d7e9a0c31")],
        ),
        torch=torch_section("2.8.0+cu128", "12.8", site, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
        toolchain_=toolchain(("/usr/local/cuda-12.8/bin/nvcc", "12.8.93"), ("/usr/bin/gcc", "11.4.0")),
        kernels_=kernels(data_dirs=jupyter_dirs("/home/ml", root)),
        env_=env(
            {
                "PATH": f"{root}/bin:/usr/local/cuda-12.8/bin:/usr/local/bin:/usr/bin:/bin",
                "VIRTUAL_ENV": root,
                "CUDA_HOME": "/usr/local/cuda-12.8",
                "HF_HOME": "/data/hf",
                "WANDB_PROJECT": "llm-train",
                "OMP_NUM_THREADS": "8",
            },
            ["WANDB_API_KEY", "HF_TOKEN"],
        ),
        git_=git("/home/ml/llm-train", "b7e3a91c0d2f4e5a6b7c8d9e0f1a2b3c4d5e6f70", "exp/lora-r64", False),
    )


def h200_drv580() -> dict:
    root = "/srv/jobs/.venv"
    site = f"{root}/lib/python3.12/site-packages"
    dists = install(
        site,
        common_py_deps("cp312")
        + torch_213("cp312", cuda=True)
        + hf_2026("cp312")
        + datasets_stack("cp312", "5.0.1"),
        "uv",
    )
    return snapshot(
        "h200-drv580-cu130",
        "2026-11-28T07:15:40Z",
        python=venv_python("3.12.12", root, "/usr", kind="uv"),
        dists=dists,
        platform=ubuntu(
            "24.04", "6.8.0-87-generic", "Intel(R) Xeon(R) Platinum 8480+", 16, 125.8, 62.9, "2.39"
        ),
        accelerators=nvidia(
            "580.82.07",
            "13.0",
            [gpu(0, "NVIDIA H200", 143771, "9.0", "0e5c3a2d-7b18-4f9e-a6d2-91c8b3e4f5a6")],
        ),
        torch=torch_section("2.13.0", "13.0", site, "cf30153c4c131c8164ee7798e5022d810682e2cb"),
        toolchain_=toolchain(None, ("/usr/bin/gcc", "13.3.0")),
        kernels_=kernels(data_dirs=jupyter_dirs("/root", root)),
        env_=env(
            {
                "PATH": f"{root}/bin:/usr/local/bin:/usr/bin:/bin",
                "VIRTUAL_ENV": root,
                "UV_CACHE_DIR": "/srv/cache/uv",
                "HF_HUB_ENABLE_HF_TRANSFER": "0",
            }
        ),
    )


def old_driver_470() -> dict:
    root = "/opt/conda/envs/proj"
    site = f"{root}/lib/python3.10/site-packages"
    py = venv_python("3.10.14", root, root, kind="conda")
    py.update(
        sys_path=[
            "",
            f"{root}/lib/python310.zip",
            f"{root}/lib/python3.10",
            f"{root}/lib/python3.10/lib-dynload",
            site,
        ],
        site_dirs=[site],
    )
    hf = [d for d in hf_2025("cp310") if d["name"] != "numpy"] + [
        dist("numpy", "1.26.4", tags=("cp310-cp310-manylinux_2_17_x86_64",))
    ]
    dists = install(site, common_py_deps("cp310") + torch_231_cu121("cp310") + hf)
    return snapshot(
        "old-driver-470-cu121",
        "2026-11-18T11:05:33Z",
        python=py,
        dists=dists,
        platform=ubuntu(
            "20.04", "5.4.0-216-generic", "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", 40, 376.6, 188.3, "2.31"
        ),
        accelerators=nvidia(
            "470.256.02",
            "11.4",
            [
                gpu(0, "Tesla V100-SXM2-32GB", 32510, "7.0", "6f1a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8"),
                gpu(1, "Tesla V100-SXM2-32GB", 32510, "7.0", "7a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809"),
            ],
        ),
        torch=torch_section("2.3.1+cu121", "12.1", site, "63d5e9221bedd1546b7d364b5ce4171547db12a9"),
        toolchain_=toolchain(("/usr/local/cuda-11.4/bin/nvcc", "11.4.152"), ("/usr/bin/gcc", "9.4.0")),
        kernels_=kernels(data_dirs=jupyter_dirs("/home/lab", root)),
        env_=env(
            {
                "PATH": f"{root}/bin:/opt/conda/condabin:/usr/local/cuda-11.4/bin:/usr/bin:/bin",
                "CONDA_PREFIX": root,
                "CONDA_DEFAULT_ENV": "proj",
                "LD_LIBRARY_PATH": "/usr/local/cuda-11.4/lib64",
                "CUDA_HOME": "/usr/local/cuda-11.4",
            }
        ),
    )


def multi_gpu_8xa100() -> dict:
    root = "/scratch/u123/envs/pretrain"
    site, dists = training_venv("cp312", root)
    gpus = [
        gpu(i, "NVIDIA A100-SXM4-80GB", 81920, "8.0", f"{i:x}1c9e8d7-2b3a-4c5d-8e6f-a7b8c9d0e1f{i}")
        for i in range(8)
    ]
    return snapshot(
        "multi-gpu-8xa100",
        "2026-11-22T03:47:19Z",
        python=venv_python("3.12.11", root, "/sw/python/3.12.11"),
        dists=dists,
        platform=ubuntu(
            "22.04", "5.15.0-144-generic", "AMD EPYC 7763 64-Core Processor", 128, 1007.7, 503.9, "2.35"
        ),
        hosted=[{"name": "slurm", "signal": "SLURM_JOB_ID is set", "gpu_expected": True}],
        accelerators=nvidia("570.158.01", "12.8", gpus, cvd="0,1,2,3,4,5,6,7"),
        torch=torch_section("2.8.0+cu128", "12.8", site, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
        toolchain_=toolchain(("/sw/cuda/12.8/bin/nvcc", "12.8.93"), ("/usr/bin/gcc", "11.4.0")),
        kernels_=kernels(data_dirs=jupyter_dirs("/home/u123", root)),
        env_=env(
            {
                "PATH": f"{root}/bin:/sw/cuda/12.8/bin:/usr/bin:/bin",
                "VIRTUAL_ENV": root,
                "SLURM_JOB_ID": "4815162",
                "SLURM_NNODES": "4",
                "SLURM_NTASKS_PER_NODE": "8",
                "SLURM_PROCID": "0",
                "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
                "NCCL_IB_HCA": "mlx5",
                "NCCL_SOCKET_IFNAME": "ib0",
                "NCCL_DEBUG": "WARN",
                "NCCL_ASYNC_ERROR_HANDLING": "1",
                "OMP_NUM_THREADS": "16",
                "TORCH_NCCL_BLOCKING_WAIT": "0",
                "HF_DATASETS_CACHE": "/scratch/u123/hf",
            },
            ["WANDB_API_KEY"],
        ),
        git_=git("/scratch/u123/pretrain", "2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c0b2d4f6e8a", "main", False),
    )


def pypi_torch213_workstation(
    name: str, captured: str, home: str, root: str, kernel: str, cpu: tuple, driver: tuple, card: dict
) -> dict:
    """Ubuntu 24.04 with a venv of PyPI's default torch 2.13.0 (the CUDA 13.0 build) and the
    2026 HF stack; ``cpu``: (model, cores, memory GiB, /dev/shm GiB); ``driver``: (version, CUDA)."""
    site = f"{root}/lib/python3.12/site-packages"
    dists = install(site, common_py_deps("cp312") + torch_213("cp312", cuda=True) + hf_2026("cp312"))
    return snapshot(
        name,
        captured,
        python=venv_python("3.12.3", root, "/usr"),
        dists=dists,
        platform=ubuntu("24.04", kernel, *cpu, "2.39"),
        accelerators=nvidia(*driver, [card]),
        torch=torch_section("2.13.0", "13.0", site, "cf30153c4c131c8164ee7798e5022d810682e2cb"),
        toolchain_=toolchain(None, ("/usr/bin/gcc", "13.3.0")),
        kernels_=kernels(data_dirs=jupyter_dirs(home, root)),
        env_=env({"PATH": f"{root}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": root}),
    )


def v100_cu130() -> dict:
    return pypi_torch213_workstation(
        "v100-cu130",
        "2026-11-24T16:30:02Z",
        "/home/lab",
        "/home/lab/.venvs/new",
        "6.8.0-85-generic",
        ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", 40, 376.6, 188.3),
        ("580.95.05", "13.0"),
        gpu(0, "Tesla V100-PCIE-16GB", 16384, "7.0", "3c8d1e2f-5a6b-7c8d-9e0f-1a2b3c4d5e6f"),
    )


def rtx5090_drv570() -> dict:
    """A Blackwell workstation (RTX 5090, sm_120) on a 570 driver (CUDA 12.8) with PyPI's
    default torch 2.13.0 (a CUDA 13.0 build this driver cannot run)."""
    return pypi_torch213_workstation(
        "rtx5090-drv570",
        "2026-11-28T09:12:44Z",
        "/home/dev",
        "/home/dev/proj/.venv",
        "6.8.0-88-generic",
        ("AMD Ryzen 9 9950X 16-Core Processor", 32, 124.9, 62.4),
        ("570.153.02", "12.8"),
        gpu(0, "NVIDIA GeForce RTX 5090", 32607, "12.0", "5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"),
    )


def ros_polluted() -> dict:
    root = "/home/robo/ws/.venv"
    site = f"{root}/lib/python3.11/site-packages"
    ros = "/opt/ros/humble/lib/python3.10/site-packages"
    ros_local = "/opt/ros/humble/local/lib/python3.10/dist-packages"
    py = venv_python("3.11.13", root, "/usr", pythonpath=[ros, ros_local])
    cp = "cp311"
    venv_dists = (
        common_py_deps(cp)
        + torch_28(cp, "cu128", CU128_PINS)
        + hf_2025(cp)
        + [
            dist("pynvml", "11.5.0", top_level=["pynvml"]),
            dist("nvidia-ml-py", "12.560.30", top_level=["pynvml"]),
            dist(
                "opencv-python",
                "4.12.0.88",
                ['numpy<2.3.0,>=2; python_version >= "3.9"'],
                top_level=["cv2"],
                tags=("cp37-abi3-manylinux_2_17_x86_64",),
            ),
        ]
    )
    for d in venv_dists:
        if d["name"] == "packaging":
            d["shadowed"] = True
    ros_dists = install(
        ros,
        [
            dist("packaging", "21.3", ["pyparsing!=3.0.5,>=2.0.2"], installer=""),
            dist("rclpy", "3.3.16", [], installer=""),
            dist(
                "rosidl-runtime-py",
                "0.9.3",
                ["numpy", "pyyaml"],
                top_level=["rosidl_runtime_py"],
                installer="",
            ),
            dist("pyparsing", "2.4.7", installer=""),
        ],
        installer="",
    )
    for d in ros_dists:
        d["metadata_dir"] = d["metadata_dir"].replace(".dist-info", "-py3.10.egg-info")
        d["wheel_tags"] = []
    dists = ros_dists + install(site, venv_dists)
    ros_kernel = kernelspec(
        "python3", "/usr/local/share/jupyter", "python3", "/usr/bin/python3", "Python 3 (ipykernel)"
    )
    return snapshot(
        "ros-polluted",
        "2026-11-19T10:12:45Z",
        python=py,
        dists=dists,
        platform=ubuntu(
            "22.04", "6.8.0-60-generic", "13th Gen Intel(R) Core(TM) i9-13900K", 32, 62.6, 31.3, "2.35"
        ),
        accelerators=nvidia(
            "570.169",
            "12.8",
            [
                gpu(
                    0,
                    "NVIDIA GeForce RTX 4090",
                    24564,
                    "8.9",
                    "9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4",
                    mig=None,
                )
            ],
        ),
        torch=torch_section("2.8.0+cu128", "12.8", site, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
        toolchain_=toolchain(("/usr/bin/nvcc", "11.5.119"), ("/usr/bin/gcc", "11.4.0")),
        kernels_=kernels(ros_kernel, data_dirs=jupyter_dirs("/home/robo", root)),
        env_=env(
            {
                "PATH": f"{root}/bin:/opt/ros/humble/bin:/usr/local/bin:/usr/bin:/bin",
                "VIRTUAL_ENV": root,
                "PYTHONPATH": f"{ros}:{ros_local}",
                "LD_LIBRARY_PATH": "/opt/ros/humble/opt/rviz_ogre_vendor/lib:"
                "/opt/ros/humble/lib/x86_64-linux-gnu:/opt/ros/humble/lib",
                "ROS_DISTRO": "humble",
                "AMENT_PREFIX_PATH": "/opt/ros/humble",
            }
        ),
        git_=git("/home/robo/ws", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "feature/grasp-net", True),
    )


def vllm_011_h100() -> dict:
    root = "/opt/serve/.venv"
    cp = "cp312"
    site = f"{root}/lib/python3.12/site-packages"
    stack = (
        common_py_deps(cp)
        + torch_28(cp, "cu128", CU128_PINS)
        + hf_2025(cp)
        + [
            # vLLM's Requires-Dist, verbatim for the pins; the long tail of serving deps (fastapi,
            # ray, openai, outlines …) is left out of both requires and the env to keep the file small.
            dist(
                "vllm",
                "0.11.0",
                [
                    "regex",
                    "psutil",
                    "numpy",
                    "requests>=2.26.0",
                    "tqdm",
                    "transformers>=4.55.2",
                    "tokenizers>=0.21.1",
                    "protobuf",
                    "pydantic>=2.11.7",
                    'xgrammar==0.1.25; platform_machine == "x86_64" or platform_machine == '
                    '"aarch64" or platform_machine == "arm64"',
                    "typing_extensions>=4.10",
                    "filelock>=3.16.1",
                    "msgspec",
                    "pyyaml",
                    "six>=1.16.0",
                    'setuptools<80,>=77.0.3; python_version > "3.11"',
                    "einops",
                    "numba==0.61.2",
                    "torch==2.8.0",
                    "torchaudio==2.8.0",
                    "torchvision==0.23.0",
                    'xformers==0.0.32.post1; platform_system == "Linux" and platform_machine == "x86_64"',
                    'flashinfer-python==0.3.1; extra == "flashinfer"',
                ],
                requires_python="<3.14,>=3.9",
                provides_extras=[
                    "tensorizer",
                    "fastsafetensors",
                    "runai",
                    "audio",
                    "video",
                    "flashinfer",
                    "petit-kernel",
                ],
                tags=("cp38-abi3-manylinux1_x86_64",),
            ),
            dist(
                "xformers",
                "0.0.32.post1",
                ["numpy", "torch==2.8.0"],
                tags=("cp39-abi3-manylinux_2_28_x86_64",),
            ),
            dist(
                "xgrammar",
                "0.1.25",
                ["pydantic", "torch>=1.10.0", "transformers>=4.38.0", "ninja", "typing-extensions>=4.9.0"],
                tags=(f"{cp}-{cp}-manylinux_2_17_x86_64",),
            ),
            dist(
                "numba",
                "0.61.2",
                ["llvmlite<0.45,>=0.44.0dev0", "numpy<2.3,>=1.24"],
                tags=(f"{cp}-{cp}-manylinux2014_x86_64",),
            ),
            dist("llvmlite", "0.44.0", tags=(f"{cp}-{cp}-manylinux_2_17_x86_64",)),
            *pydantic_stack(cp),
            dist("protobuf", "6.32.1", top_level=["google"], tags=("cp39-abi3-manylinux2014_x86_64",)),
            dist("six", "1.17.0"),
            dist("einops", "0.8.1"),
            dist("msgspec", "0.19.0", tags=(f"{cp}-{cp}-manylinux_2_17_x86_64",)),
            dist("ninja", "1.13.0", tags=("py3-none-manylinux_2_12_x86_64",)),
        ]
    )
    # vLLM 0.11.0 says setuptools<80 on 3.12: the venv has what pip resolved for it
    for d in stack:
        if d["name"] == "setuptools":
            d["version"] = "79.0.1"
    dists = install(site, stack)
    return snapshot(
        "vllm-011-h100",
        "2026-11-21T12:00:18Z",
        python=venv_python("3.12.11", root, "/usr"),
        dists=dists,
        platform=ubuntu(
            "22.04", "5.15.0-153-generic", "Intel(R) Xeon(R) Platinum 8468", 32, 251.8, 125.9, "2.35"
        ),
        hosted=[{"name": "docker", "signal": "/.dockerenv exists", "gpu_expected": None}],
        accelerators=nvidia(
            "570.172.08",
            "12.8",
            [gpu(0, "NVIDIA H100 80GB HBM3", 81559, "9.0", "c41d2e3f-6a7b-8c9d-0e1f-2a3b4c5d6e7f")],
        ),
        torch=torch_section("2.8.0+cu128", "12.8", site, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
        toolchain_=toolchain(None, ("/usr/bin/gcc", "11.4.0")),
        kernels_=kernels(data_dirs=jupyter_dirs("/root", root)),
        env_=env(
            {
                "PATH": f"{root}/bin:/usr/local/bin:/usr/bin:/bin",
                "VIRTUAL_ENV": root,
                "VLLM_WORKER_MULTIPROC_METHOD": "spawn",
                "VLLM_LOGGING_LEVEL": "INFO",
                "HF_HOME": "/models/hf",
                "NVIDIA_VISIBLE_DEVICES": "all",
            },
            ["HF_TOKEN", "VLLM_API_KEY"],
        ),
        engines_=[
            {"name": "vllm", "version": "0.11.0", "torch": "2.8.0", "source": "metadata", "path": site},
        ],
    )


MACHINES = {
    "cpu-laptop": cpu_laptop,
    "colab-t4": colab_t4,
    "h100-single": h100_single,
    "h200-drv580-cu130": h200_drv580,
    "old-driver-470-cu121": old_driver_470,
    "multi-gpu-8xa100": multi_gpu_8xa100,
    "v100-cu130": v100_cu130,
    "rtx5090-drv570": rtx5090_drv570,
    "ros-polluted": ros_polluted,
    "vllm-011-h100": vllm_011_h100,
}


def unmet_requirements(snap) -> list[str]:
    """Requirements (markers evaluated for the machine, extras not requested) that no
    importable distribution satisfies: recorded machines are internally consistent."""
    from packaging.requirements import Requirement

    py = snap.python.version
    marker_env = {
        "python_version": ".".join(py.split(".")[:2]),
        "python_full_version": py,
        "platform_system": snap.platform.system,
        "platform_machine": snap.platform.machine,
        "sys_platform": "linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "extra": "",
    }
    out = []
    for d in snap.packages.distributions:
        if d.shadowed:
            continue
        for line in d.requires:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(marker_env):
                continue
            have = snap.distribution(req.name)
            if have is None or not req.specifier.contains(have.version, prereleases=True):
                out.append(
                    f"{d.name} {d.version} requires {line!r}, has {have.version if have else 'nothing'}"
                )
    return out


def build(name: str) -> bytes:
    from stackcheck.models.snapshot import Snapshot

    data = MACHINES[name]()
    snap = msgspec.convert(data, Snapshot)  # validates against the contract
    unmet = unmet_requirements(snap)
    assert not unmet, f"{name}: " + "; ".join(unmet)
    return msgspec.json.format(msgspec.json.encode(snap), indent=1) + b"\n"


def main() -> int:
    for name in MACHINES:
        (HERE / f"{name}.json").write_bytes(build(name))
        print(f"wrote {name}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
