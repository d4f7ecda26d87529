"""LISA 3.1.0's own EAS behaviour tests (``lisa.tests.scheduler.eas_behaviour``) on
hetsched's traces, with hetsched's defaults (no ``--set``): for each test class and each of
juno_r0 and hikey960, the rt-app profile is the class's own (``get_rtapp_profile()``,
written to JSON by LISA's ``RTAConf``), hetsched runs it, and the bundle built on the
result directory runs LISA's ``test_task_placement`` and ``test_slack``.

The PlatformInfo LISA needs comes from hetsched's platform model
(``hetsched platforms show NAME --json``): CPU capacities, OPPs, frequency domains, and the
Energy Model the engine registers, as LISA's ``LinuxEnergyModel`` builds it from debugfs
(per-CPU active states: capacity at each OPP and its power; one idle state of no power).

Run it with the venv made by ``tools/lisa-venv.sh``; the CLI comes from ``$HETSCHED_CLI``
or ``target/release/hetsched``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import OrderedDict
from pathlib import Path

import pytest

eas = pytest.importorskip(
    "lisa.tests.scheduler.eas_behaviour", reason="LISA 3.1.0 not installed (tools/lisa-venv.sh)"
)
from lisa.energy_model import (  # noqa: E402
    ActiveState,
    EnergyModelNode,
    EnergyModelRoot,
    LinuxEnergyModel,
    PowerDomain,
)
from lisa.platforms.platinfo import PlatformInfo  # noqa: E402
from lisa.tests.base import Result  # noqa: E402
from lisa.trace import Trace, TxtTraceParser  # noqa: E402
from lisa.wlgen.rta import RTAConf  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
CLI = Path(os.environ.get("HETSCHED_CLI", REPO / "target" / "release" / "hetsched"))

PLATFORMS = ["juno_r0", "hikey960"]
TESTS = [
    "OneSmallTask",
    "ThreeSmallTasks",
    "TwoBigTasks",
    "TwoBigThreeSmall",
    "EnergyModelWakeMigration",
    "RampUp",
    "RampDown",
]
# rt-app's trace_marker categories LISA's rt-app analyses read.
RTAPP_EVENTS = ["main", "task", "loop", "event", "stats"]


def platform_model(name: str) -> dict:
    out = subprocess.run(
        [str(CLI), "platforms", "show", name, "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def energy_model(model: dict) -> LinuxEnergyModel:
    """The engine's Energy Model as LISA's ``LinuxEnergyModel.from_target()`` builds it."""
    plat = model["platform"]
    caps = {c["id"]: c["capacity"] for c in plat["cpus"]}
    nodes = []
    domains = []
    for pd in model["energy_model"]["pds"]:
        cpus = pd["cpus"]
        domains.append(sorted(cpus))
        fmax = max(s["frequency"] for s in pd["table"])
        for cpu in cpus:
            states = OrderedDict(
                (s["frequency"], ActiveState(s["frequency"] * caps[cpu] / fmax, s["power"]))
                for s in sorted(pd["table"], key=lambda s: s["frequency"])
            )
            nodes.append((cpu, states))
    return LinuxEnergyModel(
        root_node=EnergyModelRoot(
            children=[
                EnergyModelNode(cpu=cpu, active_states=states, idle_states=OrderedDict(WFI=0))
                for cpu, states in sorted(nodes, key=lambda n: n[0])
            ]
        ),
        root_power_domain=PowerDomain(
            children=[PowerDomain(cpu=cpu, idle_states=["WFI"]) for cpu, _ in sorted(nodes)],
            idle_states=[],
        ),
        freq_domains=sorted(domains),
    )


def platform_info(name: str) -> PlatformInfo:
    model = platform_model(name)
    plat = model["platform"]
    caps = {c["id"]: c["capacity"] for c in plat["cpus"]}
    freqs = {
        c["id"]: sorted(o["freq_khz"] for o in plat["perf_domains"][c["perf_domain"]]["opps"])
        for c in plat["cpus"]
    }
    return PlatformInfo(
        {
            "name": name,
            "cpus-count": len(caps),
            "numa-nodes-count": 1,
            "cpu-capacities": {"orig": caps, "writeable": False},
            # rt-app's calibration (ns per loop) as the engine's work speed gives it
            "rtapp": {"calib": {cpu: round(100 * 1024 / cap) for cpu, cap in caps.items()}},
            "freqs": freqs,
            "freq-domains": sorted(sorted(pd["cpus"]) for pd in plat["perf_domains"]),
            "nrg-model": energy_model(model),
        },
        src="hetsched",
    )


def bundle_class(test: str):
    """The LISA test class, reading the ftrace text hetsched writes."""
    base = getattr(eas, test)

    class OnHetsched(base):
        TRACE_PATH = "trace.txt"

        def get_trace(self, events=None, **kwargs):
            return Trace(
                self.trace_path,
                self.plat_info,
                events=events,
                parser=TxtTraceParser.from_txt_file,
                **kwargs,
            )

    OnHetsched.__name__ = OnHetsched.__qualname__ = f"{test}OnHetsched"
    return OnHetsched


@pytest.fixture(scope="module")
def plat_infos():
    if not CLI.exists():
        pytest.skip(f"{CLI} not built (make build)")
    return {name: platform_info(name) for name in PLATFORMS}


def run_bundle(test: str, platform: str, plat_info: PlatformInfo, res_dir: Path):
    cls = bundle_class(test)
    profile = cls.get_rtapp_profile(plat_info)
    caps = plat_info["cpu-capacities"]["orig"]
    biggest = max(caps, key=lambda c: (caps[c], -c))
    conf = RTAConf.from_profile(
        profile,
        plat_info=plat_info,
        calibration=f"CPU{biggest}",
        trace_events=RTAPP_EVENTS,
    )
    (res_dir / "rta.json").write_text(conf.json)
    (res_dir / "dmesg.log").write_text("")
    subprocess.run(
        [
            str(CLI),
            "run",
            "--platform",
            platform,
            "--workload",
            str(res_dir / "rta.json"),
            "--trace",
            str(res_dir / "trace.txt"),
            "--json",
            str(res_dir / "result.json"),
        ],
        check=True,
        capture_output=True,
    )
    return cls(str(res_dir), plat_info)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("test", TESTS)
def test_eas_behaviour(test, platform, plat_infos, tmp_path):
    bundle = run_bundle(test, platform, plat_infos[platform], tmp_path)
    placement = bundle.test_task_placement()
    assert placement.result is Result.PASSED, str(placement)
    slack = bundle.test_slack()
    assert slack.result is Result.PASSED, str(slack)
