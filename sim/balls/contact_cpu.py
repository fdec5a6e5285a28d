"""DEM contact forces and semi-implicit Euler integration on the CPU (numba): the twin of contact.cuh.

Model and parameters: see ``sim/balls/world.py``. ``force`` and ``torque`` are (n, 4) float32
accumulators (w unused) so the layout matches the GPU's float4 arrays. Every operation is the GPU's, in
float32 (the parameters as ``world.contact_args`` gives them, the constants below), each rounded on its
own: a contact's force is the GPU's bit for bit, and the two steps differ only in the order they sum a
ball's contacts. (A float64 step would disagree most near the trough shell, where a ball's normal rests
on the difference of two near numbers.)
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

F = np.float32  # numba keeps a float32 global float32; a float literal would widen to float64
FOUR_THIRDS_PI = F(4.0 / 3.0 * np.pi)
# Viscous caps of friction and rolling resistance, as fractions of w0. Explicit integration keeps
# a ball's summed damping rate under 2/dt only if each contact's share is small: a sliding
# contact's relative velocity decays at 3.5 * TANGENTIAL_DAMPING * w0 (spin takes 5/2 of it).
TANGENTIAL_DAMPING = F(0.15)
ROLLING_DAMPING = F(0.5)
ZERO, ONE, TWO, TWO_FIFTHS = F(0.0), F(1.0), F(2.0), F(0.4)


@numba.njit(inline="always")
def _mass(r, density):
    return density * FOUR_THIRDS_PI * r * r * r


@numba.njit(inline="always")
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@numba.njit(cache=True)
def pair_forces(pos, vel, omega, pairs, force, torque, density, w0, zeta, mu, mu_roll):
    """Ball-ball contacts over the pair list; forces act on both balls (serial: no races)."""
    for k in range(pairs.shape[0]):
        i = pairs[k, 0]
        j = pairs[k, 1]
        dx = pos[j, 0] - pos[i, 0]
        dy = pos[j, 1] - pos[i, 1]
        dz = pos[j, 2] - pos[i, 2]
        ri = pos[i, 3]
        rj = pos[j, 3]
        dist2 = dx * dx + dy * dy + dz * dz
        reach = ri + rj
        if dist2 >= reach * reach or dist2 == 0.0:
            continue
        dist = np.sqrt(dist2)
        overlap = reach - dist
        inv = ONE / dist
        nx, ny, nz = inv * dx, inv * dy, inv * dz  # from i to j
        mi = _mass(ri, density)
        mj = _mass(rj, density)
        m_eff = mi * mj / (mi + mj)
        # velocity of j's contact point relative to i's (spin included)
        cix, ciy, ciz = _cross(omega[i, 0], omega[i, 1], omega[i, 2], ri * nx, ri * ny, ri * nz)
        cjx, cjy, cjz = _cross(omega[j, 0], omega[j, 1], omega[j, 2], -rj * nx, -rj * ny, -rj * nz)
        vx = (vel[j, 0] + cjx) - (vel[i, 0] + cix)
        vy = (vel[j, 1] + cjy) - (vel[i, 1] + ciy)
        vz = (vel[j, 2] + cjz) - (vel[i, 2] + ciz)
        vn = vx * nx + vy * ny + vz * nz  # < 0 while approaching
        fn = m_eff * (w0 * w0 * overlap - TWO * zeta * w0 * vn)
        if fn <= 0.0:
            continue
        fx, fy, fz = fn * nx, fn * ny, fn * nz  # on j
        tx, ty, tz = vx - vn * nx, vy - vn * ny, vz - vn * nz
        vt = np.sqrt(tx * tx + ty * ty + tz * tz)
        if vt > 0.0:
            ft = min(mu * fn, TANGENTIAL_DAMPING * m_eff * w0 * vt) / vt
            gx, gy, gz = -ft * tx, -ft * ty, -ft * tz  # friction on j
            fx += gx
            fy += gy
            fz += gz
            # torques: lever arm from each centre to the contact point
            ax, ay, az = _cross(-rj * nx, -rj * ny, -rj * nz, gx, gy, gz)
            torque[j, 0] += ax
            torque[j, 1] += ay
            torque[j, 2] += az
            ax, ay, az = _cross(ri * nx, ri * ny, ri * nz, -gx, -gy, -gz)
            torque[i, 0] += ax
            torque[i, 1] += ay
            torque[i, 2] += az
        force[j, 0] += fx
        force[j, 1] += fy
        force[j, 2] += fz
        force[i, 0] -= fx
        force[i, 1] -= fy
        force[i, 2] -= fz
        # rolling resistance against relative spin
        wx = omega[j, 0] - omega[i, 0]
        wy = omega[j, 1] - omega[i, 1]
        wz = omega[j, 2] - omega[i, 2]
        wr = np.sqrt(wx * wx + wy * wy + wz * wz)
        if wr > 0.0 and mu_roll > 0.0:
            r_eff = ri * rj / reach
            i_eff = TWO_FIFTHS * m_eff * r_eff * r_eff
            tr = min(mu_roll * r_eff * fn, ROLLING_DAMPING * i_eff * w0 * wr) / wr
            torque[j, 0] -= tr * wx
            torque[j, 1] -= tr * wy
            torque[j, 2] -= tr * wz
            torque[i, 0] += tr * wx
            torque[i, 1] += tr * wy
            torque[i, 2] += tr * wz


@numba.njit(inline="always")
def trough_contact(x, y, z, radius, z_min, z_max):
    """Vector from the nearest point of the trough shell to (x, y, z), and its length.

    The shell is the lower half-cylinder surface, so the nearest point is on the surface below
    the rim, on a rim edge above it, and on an end edge beyond |z| limits: one rule covers the
    inside, the outside and the edges, with no jump when a ball crosses the rim height.
    """
    if y <= 0.0:
        d = np.sqrt(x * x + y * y)
        if d == 0.0:
            return ZERO, ZERO, ZERO, radius
        sx, sy = radius * x / d, radius * y / d
    else:
        sx, sy = (radius if x >= 0.0 else -radius), ZERO
    sz = min(max(z, z_min), z_max)
    cx, cy, cz = x - sx, y - sy, z - sz
    return cx, cy, cz, np.sqrt(cx * cx + cy * cy + cz * cz)


@numba.njit(cache=True, parallel=True)
def trough_forces(pos, vel, omega, force, torque, density, w0, zeta, mu, mu_roll, radius, z_min, z_max):
    """Contacts with the trough shell (either side, rims and end edges included)."""
    for i in prange(pos.shape[0]):
        r = pos[i, 3]
        cx, cy, cz, dist = trough_contact(pos[i, 0], pos[i, 1], pos[i, 2], radius, z_min, z_max)
        overlap = r - dist
        if overlap <= 0.0 or dist == 0.0:
            continue
        inv = -ONE / dist
        nx, ny, nz = inv * cx, inv * cy, inv * cz  # from the centre towards the shell
        m = _mass(r, density)
        ax, ay, az = _cross(omega[i, 0], omega[i, 1], omega[i, 2], r * nx, r * ny, r * nz)
        vx = vel[i, 0] + ax
        vy = vel[i, 1] + ay
        vz = vel[i, 2] + az
        vn = vx * nx + vy * ny + vz * nz  # > 0 while moving into the shell
        fn = m * (w0 * w0 * overlap + TWO * zeta * w0 * vn)
        if fn <= 0.0:
            continue
        fx, fy, fz = -fn * nx, -fn * ny, -fn * nz
        tx, ty, tz = vx - vn * nx, vy - vn * ny, vz - vn * nz
        vt = np.sqrt(tx * tx + ty * ty + tz * tz)
        if vt > 0.0:
            ft = min(mu * fn, TANGENTIAL_DAMPING * m * w0 * vt) / vt
            gx, gy, gz = -ft * tx, -ft * ty, -ft * tz
            fx += gx
            fy += gy
            fz += gz
            ax, ay, az = _cross(r * nx, r * ny, r * nz, gx, gy, gz)
            torque[i, 0] += ax
            torque[i, 1] += ay
            torque[i, 2] += az
        force[i, 0] += fx
        force[i, 1] += fy
        force[i, 2] += fz
        wx, wy, wz = omega[i, 0], omega[i, 1], omega[i, 2]
        wr = np.sqrt(wx * wx + wy * wy + wz * wz)
        if wr > 0.0 and mu_roll > 0.0:
            tr = min(mu_roll * r * fn, ROLLING_DAMPING * TWO_FIFTHS * m * r * r * w0 * wr) / wr
            torque[i, 0] -= tr * wx
            torque[i, 1] -= tr * wy
            torque[i, 2] -= tr * wz


@numba.njit(cache=True, parallel=True)
def integrate(pos, vel, omega, force, torque, density, gravity, dt):
    """Semi-implicit Euler; clears the accumulators for the next step."""
    for i in prange(pos.shape[0]):
        r = pos[i, 3]
        m = _mass(r, density)
        inv_m = ONE / m
        inv_i = ONE / (TWO_FIFTHS * m * r * r)
        vel[i, 0] += dt * force[i, 0] * inv_m
        vel[i, 1] += dt * (force[i, 1] * inv_m - gravity)
        vel[i, 2] += dt * force[i, 2] * inv_m
        pos[i, 0] += dt * vel[i, 0]
        pos[i, 1] += dt * vel[i, 1]
        pos[i, 2] += dt * vel[i, 2]
        omega[i, 0] += dt * torque[i, 0] * inv_i
        omega[i, 1] += dt * torque[i, 1] * inv_i
        omega[i, 2] += dt * torque[i, 2] * inv_i
        for c in range(4):
            force[i, c] = 0.0
            torque[i, c] = 0.0
