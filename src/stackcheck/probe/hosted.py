"""Where this environment runs: hosted notebooks, CI, containers, WSL, batch schedulers.

Each platform found comes with the ``signal`` that identified it, so a surprising verdict can
be traced to one environment variable or file. ``gpu_expected`` is ``False`` where the
platform is known to give no GPU in this session (GitHub-hosted runners, a Colab or Kaggle
session without an accelerator), which lets checks tell "no GPU here, as expected" from
"the GPU went missing".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from stackcheck.models.snapshot import HostedPlatform, HostedSection
from stackcheck.probe.files import read_small

DOCKERENV = "/.dockerenv"
CONTAINERENV = "/run/.containerenv"
CGROUP = "/proc/1/cgroup"
PROC_VERSION = "/proc/version"
SAGEMAKER_METADATA = "/opt/ml/metadata/resource-metadata.json"

_CI_VARS = (  # generic CI systems: the variable each one always sets
    ("GITLAB_CI", "gitlab-ci"),
    ("BUILDKITE", "buildkite"),
    ("CIRCLECI", "circleci"),
    ("TRAVIS", "travis"),
    ("JENKINS_URL", "jenkins"),
    ("TF_BUILD", "azure-pipelines"),
    ("TEAMCITY_VERSION", "teamcity"),
    ("BITBUCKET_BUILD_NUMBER", "bitbucket-pipelines"),
)


def collect(ctx=None) -> HostedSection:
    found = detect(os.environ, os.path.exists, read_small)
    return HostedSection(status="ok" if found else "absent", source="env+files", platforms=found)


def detect(
    env: Mapping[str, str], exists: Callable[[str], bool], read: Callable[[str], str]
) -> list[HostedPlatform]:
    """Pure detection over an environment, a file-existence test and a file reader."""
    out: list[HostedPlatform] = []

    def add(name: str, signal: str, gpu_expected: bool | None = None) -> None:
        out.append(HostedPlatform(name=name, signal=signal, gpu_expected=gpu_expected))

    if "COLAB_RELEASE_TAG" in env or "COLAB_BACKEND_VERSION" in env:
        var = "COLAB_RELEASE_TAG" if "COLAB_RELEASE_TAG" in env else "COLAB_BACKEND_VERSION"
        gpu = env.get("COLAB_GPU", "")
        tpu = "COLAB_TPU_ADDR" in env or "TPU_ACCELERATOR_TYPE" in env
        add(
            "colab",
            f"{var} is set" + (f", COLAB_GPU={gpu}" if gpu else ", no COLAB_GPU"),
            gpu == "1" if not tpu else False,
        )
    if "KAGGLE_KERNEL_RUN_TYPE" in env or "KAGGLE_URL_BASE" in env:
        var = "KAGGLE_KERNEL_RUN_TYPE" if "KAGGLE_KERNEL_RUN_TYPE" in env else "KAGGLE_URL_BASE"
        accel = env.get("KAGGLE_GPU_TYPE") or env.get("KAGGLE_ACCELERATOR_TYPE")
        add("kaggle", f"{var} is set", True if accel else None)
    sm_var = next(
        (
            v
            for v in (
                "SM_CURRENT_HOST",
                "SM_TRAINING_ENV",
                "SAGEMAKER_INTERNAL_IMAGE_URI",
                "SAGEMAKER_SPACE_NAME",
            )
            if v in env
        ),
        None,
    )
    if sm_var:
        add("sagemaker", f"{sm_var} is set")
    elif exists(SAGEMAKER_METADATA):
        add("sagemaker", f"{SAGEMAKER_METADATA} exists")
    ms_var = next(
        (v for v in ("MODELSCOPE_ENVIRONMENT", "DSW_INSTANCE_ID", "PAI_DSW_INSTANCE_ID") if v in env), None
    )
    if ms_var:
        add("modelscope", f"{ms_var} is set")
    if env.get("CNB", "").lower() == "true" or "CNB_BUILD_ID" in env:
        add("cnb", "CNB=true" if env.get("CNB", "").lower() == "true" else "CNB_BUILD_ID is set")
    if env.get("GITHUB_ACTIONS") == "true":
        hosted = env.get("RUNNER_ENVIRONMENT", "github-hosted") == "github-hosted"
        add(
            "github-actions",
            f"GITHUB_ACTIONS=true, RUNNER_ENVIRONMENT={env.get('RUNNER_ENVIRONMENT', '(unset)')}",
            False if hosted else None,
        )
    else:
        ci = next(((var, name) for var, name in _CI_VARS if env.get(var)), None)
        if ci:
            add("ci", f"{ci[0]} is set ({ci[1]})")
        elif env.get("CI", "").lower() in ("true", "1"):
            add("ci", f"CI={env['CI']}")
    if exists(DOCKERENV):
        add("docker", f"{DOCKERENV} exists")
    if exists(CONTAINERENV):
        add("podman", f"{CONTAINERENV} exists")
    if not any(p.name in ("docker", "podman") for p in out):
        cgroup = read(CGROUP)
        for word in ("docker", "containerd", "kubepods", "libpod", "lxc"):
            if word in cgroup:
                add("docker" if word != "libpod" else "podman", f"{CGROUP} mentions {word}")
                break
    if "KUBERNETES_SERVICE_HOST" in env:
        add("kubernetes", "KUBERNETES_SERVICE_HOST is set")
    if "WSL_DISTRO_NAME" in env or "microsoft" in read(PROC_VERSION).lower():
        add(
            "wsl",
            "WSL_DISTRO_NAME is set" if "WSL_DISTRO_NAME" in env else f"{PROC_VERSION} mentions Microsoft",
        )
    if "SLURM_JOB_ID" in env:
        gres = env.get("SLURM_JOB_GPUS") or env.get("SLURM_GPUS_ON_NODE") or env.get("SLURM_STEP_GPUS")
        add("slurm", "SLURM_JOB_ID is set" + (", GPUs allocated" if gres else ""), True if gres else None)
    return out
