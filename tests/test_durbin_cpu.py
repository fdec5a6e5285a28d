"""The durbin CPU twin against the C code (built with cc) and an independent Python loop, bit for bit;
the inputs' meaning (scipy, reflection coefficients); PolyBench's printouts; and the persistent GPU
kernel's data flow (which block holds which entry, rings, handoffs) emulated on the host."""

import pathlib
import subprocess

import numpy as np
import pytest
import scipy.linalg

from sim.durbin import durbin_cpu, inputs, layout, polybench

ROOT = pathlib.Path(__file__).resolve().parent.parent


# --- references -----------------------------------------------------------------------------------
def python_durbin(r, version):
    """The C loops transcribed literally (3.2 with its 2D arrays, 4.x with z), in Python floats."""
    n = len(r)
    r = [float(v) for v in r]
    if version == "3.2":
        y = [[0.0] * n for _ in range(n)]
        s = [[0.0] * n for _ in range(n)]
        alpha, beta = [0.0] * n, [0.0] * n
        y[0][0], beta[0], alpha[0] = r[0], 1.0, r[0]
        for k in range(1, n):
            beta[k] = beta[k - 1] - alpha[k - 1] * alpha[k - 1] * beta[k - 1]
            s[0][k] = r[k]
            for i in range(k):
                s[i + 1][k] = s[i][k] + r[k - i - 1] * y[i][k - 1]
            alpha[k] = -s[k][k] * beta[k]
            for i in range(k):
                y[i][k] = y[i][k - 1] + alpha[k] * y[k - i - 1][k - 1]
            y[k][k] = alpha[k]
        return np.array([y[i][n - 1] for i in range(n)])
    y = [0.0] * n
    y[0], beta, alpha = -r[0], 1.0, -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        total = 0.0
        for i in range(k):
            total += r[k - i - 1] * y[i]
        alpha = -(r[k] + total) / beta
        z = [y[i] + alpha * y[k - i - 1] for i in range(k)]
        y[:k] = z
        y[k] = alpha
    return np.array(y)


def run_c(exe, version, r=None, n=None, tmp=None):
    args = [str(exe), version, str(n if r is None else len(r))]
    if r is not None:
        path = tmp / "r.bin"
        np.asarray(r, "<f8").tofile(path)
        args.append(str(path))
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    lines = out.stdout.split()
    bits = np.array([int(v, 16) for v in lines[:-2]], dtype=np.uint64)
    return bits.view(np.float64), out.stderr, out.stdout.splitlines()[-1]


def case_inputs(n, version, seed):
    rng = np.random.default_rng(seed)
    cases = {
        "polybench": inputs.polybench(n, version),
        "ar1": inputs.ar1(n, rng.uniform(-0.9, 0.9)),
        "ar": inputs.ar_autocorr(n, inputs.random_kappas(rng)),
    }
    if version == "3.2":  # 3.2 only stays finite on small data: r scaled down
        cases["ar"] = cases["ar"] * 0.25
    return cases


# --- bit-exactness ------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["3.2", "4"])
@pytest.mark.parametrize("n", [2, 3, 17, 40, 121, 500])
def test_twin_is_bit_identical_to_the_c_code(c_reference, tmp_path, version, n):
    for name, r in case_inputs(n, version, seed=n).items():
        expected, dump, hash_line = run_c(c_reference, version, r, tmp=tmp_path)
        y = durbin_cpu.solve(r, version)
        assert y.view(np.uint64).tolist() == expected.view(np.uint64).tolist(), name
        assert polybench.dump(y, version) == dump, name
        assert polybench.hash_line(y) == hash_line, name


@pytest.mark.parametrize("version, n", [("3.2", 32), ("3.2", 500), ("4", 40), ("4", 400)])
def test_polybench_init_matches_the_c_init(c_reference, version, n):
    expected, dump, hash_line = run_c(c_reference, version, n=n)
    y = durbin_cpu.solve(inputs.polybench(n, version), version)
    assert y.view(np.uint64).tolist() == expected.view(np.uint64).tolist()
    assert polybench.dump(y, version) == dump and polybench.hash_line(y) == hash_line


@pytest.mark.parametrize("version", ["3.2", "4"])
@pytest.mark.parametrize("n", [2, 5, 33, 90])
def test_twin_equals_the_literal_python_loops(version, n):
    for name, r in case_inputs(n, version, seed=100 + n).items():
        np.testing.assert_array_equal(durbin_cpu.solve(r, version), python_durbin(r, version), err_msg=name)


def test_polybench_32_output_is_zeros_then_minus_a_quarter():
    y = durbin_cpu.solve(inputs.polybench(1000, "3.2"), "3.2")
    assert np.all(y[:-1] == 0) and y[-1] == -0.25


@pytest.mark.parametrize("version", ["3.2", "4"])
def test_stepping_one_k_at_a_time_equals_one_run(version):
    r = case_inputs(300, version, seed=7)["ar"]
    solver = durbin_cpu.DurbinCpu(r, version)
    history = []
    while not solver.done:
        solver.step(1 + solver.k % 5)
        history.append(solver.k)
        assert np.isnan(solver.y[solver.k :]).all() and not np.isnan(solver.y[: solver.k]).any()
    whole = durbin_cpu.DurbinCpu(r, version)
    whole.run()
    assert history[-1] == 300
    for name in ("y", "alphas", "betas"):
        np.testing.assert_array_equal(getattr(solver, name), getattr(whole, name))


def test_leading_solution_after_k_steps_solves_the_leading_system():
    r = inputs.ar_autocorr(200, inputs.random_kappas(np.random.default_rng()))
    solver = durbin_cpu.DurbinCpu(r)
    solver.step(59)  # 60 entries done
    expected = scipy.linalg.solve_toeplitz(inputs.toeplitz_column(r[:60]), -r[:60])
    np.testing.assert_allclose(solver.y[:60], expected, rtol=0, atol=1e-13)


def test_chunks_bound_each_numba_call():
    k, total = 1, 0
    while k < 200_000:
        end = durbin_cpu.chunk_end(k, 200_000)
        work = end * end - k * k
        assert end > k and (work <= 1.01 * durbin_cpu.CHUNK_WORK or end == k + 1)
        total += 1
        k = end
    assert 1000 < total < 5000


# --- what the inputs mean ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [7, 64, 1000])
def test_ar_input_returns_its_reflection_coefficients(n):
    rng = np.random.default_rng()
    kappas = inputs.random_kappas(rng)
    r = inputs.ar_autocorr(n, kappas)
    solver = durbin_cpu.DurbinCpu(r)
    solver.run()
    p = min(len(kappas), n)
    np.testing.assert_allclose(solver.alphas[:p], kappas[:p], rtol=0, atol=1e-13)
    assert np.abs(solver.alphas[p:]).max(initial=0) < 1e-13
    # y's rounding grows as eps / beta (beta: the final prediction error; kappas near +-1 make it small): up to
    # 59 eps / beta in 3000 random draws, where a fixed 1e-13 failed about one draw in a thousand
    assert np.abs(solver.y[p:]).max(initial=0) < 200 * np.finfo(np.float64).eps / solver.betas[-1]
    assert solver.betas[-1] == pytest.approx(np.prod(1 - kappas[: min(p, n - 1)] ** 2), rel=1e-12)  # beta_{n-1}
    reference = scipy.linalg.solve_toeplitz(inputs.toeplitz_column(r), -r)
    assert np.max(np.abs(solver.y - reference)) / np.max(np.abs(reference)) < 1e-12


def test_ar1_solution_is_minus_rho_then_zeros():
    y = durbin_cpu.solve(inputs.ar1(500, 0.8))
    assert y[0] == pytest.approx(-0.8, abs=1e-15) and np.abs(y[1:]).max() < 1e-15


def test_polybench_4_input_is_the_c_init():
    np.testing.assert_array_equal(inputs.polybench(4, "4"), [5.0, 4.0, 3.0, 2.0])
    np.testing.assert_array_equal(inputs.polybench(4, "3.2"), [0.0, 0.0, 0.0, 0.25])


def test_datasets_per_version():
    assert inputs.dataset_size("standard", "3.2")[0] == 4000
    assert inputs.dataset_size("MEDIUM", "3.2")[0] == 4000  # the same middle size by 4.x's name
    assert inputs.dataset_size("STANDARD", "4")[0] == 400
    assert inputs.dataset_size("EXTRALARGE", "4")[0] == 4000
    assert inputs.dataset_size("GIGA", "4")[0] == 200000
    with pytest.raises(ValueError, match="unknown dataset"):
        inputs.dataset_size("HUGE", "4")


# --- batched ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["3.2", "4"])
def test_batched_rows_are_bit_identical_to_single_solves(version):
    rng = np.random.default_rng()
    r = np.stack([inputs.ar_autocorr(24, inputs.random_kappas(rng)) for _ in range(50)])
    y, alphas, betas = durbin_cpu.batched(r, version)
    for i in range(len(r)):
        solver = durbin_cpu.DurbinCpu(r[i], version)
        solver.run()
        np.testing.assert_array_equal(y[i], solver.y)
        np.testing.assert_array_equal(alphas[i], solver.alphas)
        assert betas[i] == solver.betas[-1]


# --- printouts ---------------------------------------------------------------------------------------------
def test_dumps_frame_and_line_breaks():
    y = np.arange(42) * 0.5 - 3.0
    d3 = polybench.dump_32(y)
    assert d3.startswith("-3.00 \n-2.50 ") and d3.count("\n") == 3 and d3.endswith("17.50 ")
    d4 = polybench.dump_4(y)
    assert d4.startswith("==BEGIN DUMP_ARRAYS==\nbegin dump: y\n-3.00 ")
    assert d4.endswith("17.00 17.50 \nend   dump: y\n==END   DUMP_ARRAYS==\n") and d4.count("\n") == 7


def test_hash_is_the_running_unsigned_recurrence():
    y = np.random.default_rng().normal(size=1000)
    h = 0
    for b in y.view(np.uint64).tolist():
        h = (h * 37 + b) % 2**64
    assert polybench.bits_hash(y) == h
    assert polybench.bits_hash(np.array([-0.0])) == 2**63 and polybench.bits_hash(np.array([])) == 0


# --- the persistent kernel's data flow, emulated ---------------------------------------------------------
def emulate_persistent(r, blocks, launches, version="4"):
    """durbin.cu's persistent kernel transcribed per block (the exchange in lockstep): pairs owned per
    block, low entries, the high-entry ring (j mod S), r[p+1] and the r ring, handoffs, chunked launches."""
    n = len(r)
    S = layout.pairs_per_block(n, blocks)
    P = layout.pair_count(n)
    y = np.full(n, np.nan)
    alphas, betas = np.full(n, np.nan), np.full(n, np.nan)
    y[0] = alphas[0] = durbin_cpu.first_alpha(r[0], version)
    betas[0] = 1.0
    touched = {}
    for k0, k1 in launches:
        low, hi, rr = (np.full((blocks, S), np.nan) for _ in range(3))
        rs = np.full((blocks, S), np.nan)
        part, hand, hand_out, base = np.zeros(blocks), np.zeros(blocks), np.zeros(blocks), np.zeros(blocks, int)
        for c in range(blocks):
            a = c * S
            m = max(0, min(S, P - a))
            rs[c, :m] = r[a + 1 : a + m + 1]
            base[c] = (k0 - 1 - a) % S
            for q in range(m):
                p, j = a + q, k0 - 1 - a - q
                if j < p:
                    break
                s = (base[c] - q) % S
                if j > p:
                    low[c, q], hi[c, s], rr[c, (s + 1) % S] = y[p], y[j], r[j + 1]
                    part[c] += r[j] * y[p] + r[p] * y[j]
                else:
                    hi[c, s] = y[p]
                    part[c] += r[p] * y[p]
            b = a + S
            hand[c] = y[k0 - 1 - b] if b < P and k0 - 1 - b >= b else 0.0
        alpha, beta = alphas[k0 - 1], betas[k0 - 1]
        for k in range(k0, k1):
            sent = hand if k == k0 else hand_out.copy()
            total = part.sum()
            beta = beta - alpha * alpha * beta if version == "3.2" else (1 - alpha * alpha) * beta
            alpha_prev = alpha
            alpha = -(r[k] + total) * beta if version == "3.2" else -(r[k] + total) / beta
            alphas[k], betas[k] = alpha, beta
            touched[k] = np.full(k + 1, -1)
            touched[k][k] = 0
            for c in range(blocks):
                a = c * S
                m = max(0, min(S, P - a))
                if k - 1 - a >= a:
                    hi[c, base[c]] = alpha_prev if c == 0 else sent[c - 1]
                    if k - 1 - a > a:
                        rr[c, (base[c] + 1) % S] = r[k - a]
                part[c] = 0.0
                for q in range(m):
                    p, j = a + q, k - 1 - a - q
                    if j < p:
                        break
                    sl = (base[c] - q) % S
                    touched[k][p] = touched[k][j] = c
                    if j > p:
                        lo, hv = low[c, q], hi[c, sl]
                        low[c, q], hi[c, sl] = lo + alpha * hv, hv + alpha * lo
                        part[c] += rr[c, (sl + 1) % S] * low[c, q] + rs[c, q] * hi[c, sl]
                        if q == S - 1:
                            hand_out[c] = hi[c, sl]
                    else:
                        low[c, q] = hi[c, sl] + alpha * hi[c, sl]
                        part[c] += rs[c, q] * low[c, q]
                if c == 0:
                    part[c] += r[0] * alpha
                if k + 1 < k1:
                    base[c] = (base[c] + 1) % S
        kl = k1 - 1
        for c in range(blocks):
            a = c * S
            for q in range(max(0, min(S, P - a))):
                p, j = a + q, kl - 1 - a - q
                if j < p:
                    break
                y[p] = low[c, q]
                if j > p:
                    y[j] = hi[c, (base[c] - q) % S]
        y[kl] = alpha
    return y, alphas, betas, touched, S


@pytest.mark.parametrize("n, blocks", [(2, 1), (3, 2), (9, 4), (64, 1), (65, 3), (200, 7), (301, 16), (512, 5)])
def test_persistent_data_flow_reproduces_the_recursion(n, blocks):
    rng = np.random.default_rng()
    r = inputs.ar_autocorr(n, inputs.random_kappas(rng))
    cuts = sorted({1, n, *rng.integers(2, n, size=3).tolist()}) if n > 2 else [1, n]
    launches = list(zip(cuts[:-1], cuts[1:], strict=True))
    y, alphas, betas, touched, S = emulate_persistent(r, blocks, launches)
    solver = durbin_cpu.DurbinCpu(r)
    solver.run()
    assert not np.isnan(y).any()
    assert np.max(np.abs(y - solver.y)) / np.max(np.abs(solver.y)) < 1e-13
    np.testing.assert_allclose(alphas, solver.alphas, rtol=0, atol=1e-13)
    np.testing.assert_allclose(betas, solver.betas, rtol=1e-13)
    for k, owners in touched.items():  # the viewer's ownership map is what the kernel does
        np.testing.assert_array_equal(owners, layout.owners_persistent(k, S))


def test_persistent_data_flow_runs_polybench_32():
    r = inputs.polybench(150, "3.2")
    y, *_ = emulate_persistent(r, 4, [(1, 60), (60, 61), (61, 150)], version="3.2")
    np.testing.assert_array_equal(y, durbin_cpu.solve(r, "3.2"))


def test_two_kernel_owners_follow_the_grid_stride():
    owners = layout.owners_two_kernel(k=21, grid=2, block=4)
    # pairs 0..10 (pair 10 is the middle entry 10): thread p mod 8, block (p mod 8) // 4
    assert owners.tolist()[:11] == [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0]
    assert owners[20] == owners[0] and owners[11] == owners[9] and owners[21] == 0
