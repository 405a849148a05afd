"""The tables agree with each other: every CUDA build a torch release offers has a driver
requirement and an arch list; the pins of vLLM, SGLang and xformers name torch releases the
release table knows, with the torchvision/torchaudio the release table pairs with them."""

from __future__ import annotations

from packaging.version import Version

from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.base import release_of

KB = load_knowledge()


def test_every_offered_build_has_a_driver_requirement_and_an_arch_list():
    for rel in KB.torch.releases:
        for cuda in rel.all_cuda_builds:
            need = KB.driver_requirement(cuda)
            assert need.mvc_floor, (rel.torch, cuda)
            assert KB.arch_list(rel.torch, cuda) is not None, (rel.torch, cuda)
        if rel.pypi_default_cuda and rel.cuda_builds is not None:
            assert rel.pypi_default_cuda in rel.all_cuda_builds, rel.torch


def test_toolkit_driver_is_never_below_the_floor_of_its_major():
    for t in KB.drivers.toolkits:
        need = KB.driver_requirement(t.cuda)
        if need.mvc_floor and need.toolkit_driver:
            assert Version(need.toolkit_driver) >= Version(need.mvc_floor), t.cuda


def _pinned(row, dependency: str) -> str | None:
    reqs = KB.pins_for(row, dependency)
    exact = [str(r.specifier)[2:] for r in reqs if str(r.specifier).startswith("==")]
    return exact[0] if exact else None


def test_engine_pins_name_known_torch_releases_with_their_paired_companions():
    checked = 0
    for package in ("vllm", "sglang", "xformers"):
        for row, _, _ in KB.pin_ranges(package):
            torch = _pinned(row, "torch")
            if torch is None:
                continue
            rel = KB.torch_release(torch)
            assert rel is not None, (package, row.version, torch)
            for companion in ("torchvision", "torchaudio"):
                pinned = _pinned(row, companion)
                if pinned:
                    assert release_of(pinned) == getattr(rel, companion), (
                        package,
                        row.version,
                        companion,
                        pinned,
                    )
                    checked += 1
    assert checked > 40  # the two sources (engine metadata, torch release matrix) agree row by row


def test_xformers_and_vllm_co_pins_agree():
    for row, _, _ in KB.pin_ranges("vllm"):
        xf, torch = _pinned(row, "xformers"), _pinned(row, "torch")
        if xf and torch:
            xrow = KB.engine_pins("xformers", xf)
            assert xrow is not None and _pinned(xrow, "torch") == torch, (row.version, xf, torch)


def test_pin_rows_are_ordered_and_non_overlapping():
    for package in KB.pinned_packages():
        ranges = KB.pin_ranges(package)
        for (_, start, end), (_, nxt, _) in zip(ranges, ranges[1:]):
            assert start < end <= nxt, (package, start, end, nxt)
