"""3D falling balls with z-sorted proximity pairs (spec: docs/specs/balls.md)."""

import assets
from sim.balls import world
from sim.contract import (
    BlockColoring,
    GpuKnobs,
    HistogramSource,
    Param,
    Preset,
    SceneSpec,
    Stat,
    Toggle,
    UserStage,
    Verifier,
    Words,
)
from sim.framework import finite

PARAMS = (
    Param("gravity", "gravity", 0.0, 30.0, "%.2f", help="acceleration along -y"),
    Param("friction", "friction mu", 0.0, 3.0, "%.2f", help="Coulomb coefficient, balls and trough"),
    Param("restitution", "restitution", 0.05, 0.95, "%.2f", help="normal coefficient of restitution"),
    Param(
        "contact_freq",
        "stiffness w0",
        30.0,
        180.0,
        "%.0f rad/s",
        help="contact frequency: a contact lasts pi/w0 s; stable while w0*dt < 0.5",
    ),
    Param("rolling", "rolling resistance", 0.0, 0.2, "%.3f", help="mu_r: torque against relative spin"),
)
DRIP_RATE = Param("drip_rate", "drip rate", 10.0, 5000.0, "%.0f balls/s", log=True)

SPEC = SceneSpec(
    name="balls",
    title="3D balls falling into a trough: z-sorted proximity pairs, DEM contacts with friction",
    words=Words(unit="balls", one="ball", variant="proximity variant"),
    view="points",
    presets=tuple(
        Preset(name, p["description"], p.get("count"), p.get("key")) for name, p in assets.presets("balls").items()
    ),
    default_preset="drip",
    bench_preset="T",
    scene="sim.balls.scene:BallsScene",
    stages=("sort", "proximity", "forces+integrate"),
    stats=(
        Stat("n", "balls"),
        Stat("steps", "steps"),
        Stat("sim_time", "sim time", "{:.3f} s"),
        Stat("tests", "last pass: tests", help="predicate evaluations of the last proximity pass"),
        Stat("tests_per_ball", "tests per ball", "{:.1f}"),
        Stat("pairs", "pairs", help="pairs the last proximity pass found"),
        Stat("passes", "proximity passes"),
        finite.STAT,
    ),
    params=PARAMS + (DRIP_RATE,),
    steps_per_frame=world.STEPS_PER_PASS,
    dt=world.DT,
    count_limits=(200_000, 20_000_000),
    bytes_per_item=(400, 280),  # host: state, scratch, pairs, lists; device: 184 in the pool + GL buffers
    pace=(4e6, 2e10),  # ball-steps a second: 8.6e6 on 2 CPU threads at 8575 balls; 2.1e10 at 10M on an H200
    toggles=(
        Toggle(
            "cuda_proximity",
            "CUDA proximity",
            "the proximity pass runs as a GPU kernel (on) or on the CPU (off), whatever holds the state",
            key="F4",
        ),
    ),
    gpu=GpuKnobs(
        variants=world.PROXIMITY_VARIANTS,
        default_variant="global",
        blocks=world.BLOCK_SIZES,
        default_block=128,
        fastest="grid",
        cpu_variants=True,
        kernels_run_hint="turn on CUDA proximity (F4) or GPU physics (a)",
    ),
    verifier=Verifier(
        checks="each proximity pass is checked on the CPU",
        mismatch="balls whose pairs differ from the CPU's are drawn red",
    ),
    block_colors=BlockColoring(),
    histogram=HistogramSource(dims=3),
    kernels="sim.balls.kernels:builds",
    models="sim.balls.kernels:models",
    gate="sim.balls.bench_cases:GATE",
    ncu="sim.balls.bench_cases:NCU",
    user_stages=(
        UserStage(
            name="proximity",
            summary="the pairs of balls that may touch within a pair list's lifetime: the z-sorted sweep",
            entry="proximity",
            signature='extern "C" __global__ void proximity(const float4* pos, const float4* vel, const float* z_max, '
            "const float* z_min, int n, float t, float margin, int k, int* count, int* partners)",
            params=(
                ("pos", "the balls sorted by z_max: x, y, z, radius in w"),
                ("vel", "their velocities (w unused)"),
                ("z_max", "each ball's (z + |vz| t) + r, ascending"),
                ("z_min", "each ball's (z - |vz| t) - r"),
                ("n", "how many balls"),
                ("t", "a pair list's lifetime, 6 dt"),
                ("margin", "the reach in radii, 1.1"),
                ("k", "each ball's list capacity"),
                ("count", "partners per ball, zero before the launch; keeps counting past k"),
                ("partners", "ball i's partners at partners[i * k ..], in any order"),
            ),
            launch="one thread per ball: grid = ceil(n / block) blocks of block threads (default 128)",
            compare="as sets: each ball's partners equal the CPU z-sweep's, in any order",
            template="sim/balls/templates/proximity.cu",
            adapter="sim.balls.user_stage:ProximityStage",
        ),
    ),
)
