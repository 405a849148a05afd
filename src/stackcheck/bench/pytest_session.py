"""What ``pytest --stackcheck-bench`` does: the cases as test items, the run's files at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck.bench.run import CaseResult


class BenchFailure(Exception):
    """A case that is wrong or broke (its reason is the failure's one line)."""


class BenchItem(pytest.Item):
    def __init__(self, *, backend, shape, bench, **kwargs):
        super().__init__(**kwargs)
        self.backend, self.shape, self.bench = backend, shape, bench
        self.add_marker("stackcheck_bench")

    def runtest(self) -> None:
        result = self.bench.run_one(self.backend, self.shape)
        if result.status == "skipped":  # reported at the case (reportinfo), not at this line
            raise pytest.skip.Exception(result.reason, _use_item_location=True)
        if result.status in ("wrong", "error"):
            raise BenchFailure(f"{result.status}: {result.reason}")
        self.user_properties.append(("median_s", result.median_s))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, BenchFailure):
            return f"{self.backend.name} × {self.shape.name} ({self.shape.label()}): {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return Path("stackcheck-bench"), 0, f"{self.backend.group} {self.backend.name} × {self.shape.name}"


class BenchSession:
    def __init__(self, config):
        self.config = config
        self.results: list[CaseResult] = []
        self.device = None
        self.comparison = None
        self.written: list[Path] = []
        self.problem = ""
        self.run = None  # the BenchRun, once the session finished

    def _opt(self, name: str):
        return self.config.getoption(f"stackcheck_bench_{name}")

    @pytest.hookimpl(tryfirst=True)  # before -k / -m deselect the items
    def pytest_collection_modifyitems(self, session, config, items) -> None:
        from stackcheck.bench.cases import backends_named, shapes_for
        from stackcheck.errors import InputError

        try:
            shapes = shapes_for(self._opt("shapes"))
            backends = backends_named(self._opt("backend"))
        except InputError as exc:
            raise pytest.UsageError(f"--stackcheck-bench: {exc}") from None
        for backend in backends:
            for shape in shapes:
                if shape.op == backend.op:
                    items.append(
                        BenchItem.from_parent(
                            session,
                            name=f"stackcheck_bench[{backend.name}-{shape.name}]",
                            backend=backend,
                            shape=shape,
                            bench=self,
                        )
                    )

    def run_one(self, backend, shape) -> CaseResult:
        from stackcheck.bench import backends as kernels
        from stackcheck.bench.run import run_case

        if self.device is None:
            self.device = kernels.device_info()
        reps, warmup = self._opt("reps"), self._opt("warmup")
        result = run_case(
            backend, shape, self.device, warmup, reps, 0, None, kernels.prepare, kernels.installed, None
        )
        self.results.append(result)
        return result

    def pytest_sessionfinish(self, session) -> None:
        if not self.results or self.device is None:
            return
        from stackcheck.bench.suite import make_run, write_outputs
        from stackcheck.environment import obtain
        from stackcheck.errors import InputError, Refused

        snapshot = obtain()
        run = make_run(self.results, device=self.device.as_dict(), snapshot=snapshot)
        out = Path(self._opt("out"))
        try:
            self.written = write_outputs(run, out)
            if self._opt("record"):
                from stackcheck.bench.records import store
                from stackcheck.bench.suite import default_profile
                from stackcheck.results.ledger import Ledger

                with Ledger() as ledger:
                    store(
                        self.results,
                        snapshot=snapshot,
                        ledger=ledger,
                        profile=default_profile(run.device),
                        run_label="pytest",
                        raw_log=str(out.resolve() / "bench.json"),
                    )
            if self._opt("baseline"):
                from stackcheck.bench.compare import compare
                from stackcheck.bench.matrix import load_run

                self.comparison = compare(load_run(self._opt("baseline")), run)
                if self.comparison.regressions:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED
        except (InputError, Refused) as exc:
            self.problem = str(exc)
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        self.run = run

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.run is None:
            return
        from stackcheck.bench import matrix
        from stackcheck.bench.compare import text

        tr = terminalreporter
        tr.section("stackcheck bench")
        tr.write(matrix.text(self.run))
        if self.comparison is not None:
            tr.write("\n" + text(self.comparison))
        if self.written:
            tr.write_line(f"wrote {', '.join(str(p) for p in self.written)}")
        if self.problem:
            tr.write_line(f"stackcheck bench: {self.problem}", red=True)
