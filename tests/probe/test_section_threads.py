"""probe._collect_all runs each section in its own thread until one shared deadline: a section
that raises becomes ``failed``, one that does not answer in time ``timeout``; the others are
kept either way."""

from __future__ import annotations

import threading

import stackcheck.probe as probe
from stackcheck.models import snapshot as S


def _ctx():
    return probe.ProbeContext(python={}, packages={})


def test_a_failing_section_is_failed_and_the_others_are_kept(monkeypatch):
    import stackcheck.probe.environ
    import stackcheck.probe.git

    def boom(ctx):
        raise ValueError("boom")

    monkeypatch.setattr(stackcheck.probe.git, "collect", boom)
    monkeypatch.setattr(
        stackcheck.probe.environ, "collect", lambda ctx: S.EnvSection(status="ok", source="test")
    )
    out = probe._collect_all(("git", "env"), _ctx())
    assert (out["git"].status, out["git"].source, out["git"].error) == ("failed", "probe", "ValueError: boom")
    assert (out["env"].status, out["env"].source) == ("ok", "test")


def test_a_section_past_the_deadline_is_a_timeout(monkeypatch):
    import stackcheck.probe.environ
    import stackcheck.probe.git

    release = threading.Event()
    started = []

    def hang(ctx):
        started.append(threading.current_thread())
        release.wait(60)
        return S.GitSection(status="ok", source="late")

    monkeypatch.setattr(probe, "SECTION_TIMEOUT_S", 0.2)
    monkeypatch.setattr(stackcheck.probe.git, "collect", hang)
    monkeypatch.setattr(
        stackcheck.probe.environ, "collect", lambda ctx: S.EnvSection(status="ok", source="test")
    )
    try:
        out = probe._collect_all(("git", "env"), _ctx())
    finally:
        release.set()
    assert (out["git"].status, out["git"].source, out["git"].error) == (
        "timeout",
        "probe",
        "no answer within 0 s",
    )
    assert out["env"].status == "ok"
    (thread,) = started
    assert thread.daemon and thread.name == "stackcheck-probe-git"  # never holds the process at exit
    thread.join(60)


def test_inline_sections_run_in_the_calling_thread_and_the_others_in_their_own(monkeypatch):
    import stackcheck.probe.environ
    import stackcheck.probe.git
    import stackcheck.probe.launch
    import stackcheck.probe.network

    ran = {}

    def boom(ctx):
        raise OSError("no /proc")

    def recorder(name, section):
        def collect(ctx):
            ran[name] = threading.current_thread()
            return section(status="ok", source="test")

        return collect

    monkeypatch.setattr(stackcheck.probe.environ, "collect", recorder("env", S.EnvSection))
    monkeypatch.setattr(stackcheck.probe.network, "collect", recorder("network", S.NetworkSection))
    monkeypatch.setattr(stackcheck.probe.git, "collect", recorder("git", S.GitSection))
    monkeypatch.setattr(stackcheck.probe.launch, "collect", boom)
    out = probe._collect_all(("git", "env", "launch", "network"), _ctx())
    # an inline section that raises is failed, as a threaded one is; the others are kept
    assert (out["launch"].status, out["launch"].source, out["launch"].error) == (
        "failed",
        "probe",
        "OSError: no /proc",
    )
    assert [out[n].source for n in ("git", "env", "network")] == ["test", "test", "test"]
    assert ran["env"] is ran["network"] is threading.current_thread()
    assert ran["git"].name == "stackcheck-probe-git" and ran["git"].daemon
    assert {"env", "launch", "network", "hosted", "kernels", "platform"} == probe.INLINE
    assert not probe.INLINE & {"accelerators", "torch", "toolchain", "git", "engines"}  # NVML, subprocesses


def test_the_threaded_sections_needing_no_context_run_while_the_interpreter_is_probed(monkeypatch):
    """A live gather starts the NVML and compiler sections (threaded, :data:`NO_CONTEXT`)
    before it probes the interpreter: the interpreter probe below returns only once the
    toolchain section has begun, which it could not if the sections waited for it."""
    import stackcheck.probe.toolchain

    begun, probed_after = threading.Event(), []
    real_collect, real_sections = stackcheck.probe.toolchain.collect, probe.interpreter_sections

    def collect(ctx):
        begun.set()
        assert (ctx.python, ctx.packages) == ({}, {})  # it was given no context
        return real_collect(ctx)

    def sections(python_path=None, modules=()):
        probed_after.append(begun.wait(30))
        return real_sections(python_path, modules)

    monkeypatch.setattr(stackcheck.probe.toolchain, "collect", collect)
    monkeypatch.setattr(probe, "interpreter_sections", sections)
    early = {n for n in probe.JUDGED if n in probe.NO_CONTEXT and n not in probe.INLINE}
    assert early == {"accelerators", "toolchain"}
    snap = probe.gather(sections=probe.JUDGED)
    assert probed_after == [True]
    assert snap.toolchain.status in ("ok", "absent") and snap.toolchain.source == "files+subprocess"
    assert snap.packages.distributions and all(getattr(snap, n).source != "not-probed" for n in probe.JUDGED)
