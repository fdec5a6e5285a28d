// The contact model of one physics step (contact.cu): the twin of contact_cpu.py (see world.py).
// Built with --fmad=false, like the CPU twin (no fused multiply-adds either), which then differs
// only in the order it sums a ball's contacts.
#pragma once

struct Contact {
    float density, w0, zeta, mu, mu_roll, gravity, dt;
    float trough_radius, trough_z_min, trough_z_max;
};

#define TANGENTIAL_DAMPING 0.15f
#define ROLLING_DAMPING 0.5f
#define FOUR_THIRDS_PI 4.18879020478639f

__device__ __forceinline__ float3 cross3(float3 a, float3 b)
{
    return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
__device__ __forceinline__ float3 xyz(float4 a) { return make_float3(a.x, a.y, a.z); }
__device__ __forceinline__ float dot3(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ float3 operator+(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ float3 operator-(float3 a, float3 b) { return make_float3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ float3 operator*(float s, float3 a) { return make_float3(s * a.x, s * a.y, s * a.z); }
__device__ __forceinline__ float mass(float r, float density) { return density * FOUR_THIRDS_PI * r * r * r; }

// The device state is 40 bytes a ball: pos (x, y, z, radius), vel (vx, vy, vz, spin x) and spin_yz
// (spin y, z). The spin as a float4 (w unused), from a ball's vel and spin_yz.
__device__ __forceinline__ float4 spin_of(float4 v, float2 yz) { return make_float4(v.w, yz.x, yz.y, 0.f); }

// Force and torque on ball i from its contact with ball j at pj (nothing when they do not touch).
__device__ __forceinline__ void ball_contact(float4 pi, float4 vi, float4 wi, float4 pj, int j,
                                             const float4* __restrict__ vel, const float2* __restrict__ spin_yz,
                                             const Contact& c, float3& force, float3& torque)
{
    float3 d = xyz(pj) - xyz(pi);
    float reach = pi.w + pj.w;
    float dist2 = dot3(d, d);
    if (dist2 >= reach * reach || dist2 == 0.f) return;
    float4 vj = vel[j], wj = spin_of(vj, spin_yz[j]);
    float dist = sqrtf(dist2);
    float3 n = (1.f / dist) * d;  // from i to j
    float mi = mass(pi.w, c.density), mj = mass(pj.w, c.density);
    float m_eff = mi * mj / (mi + mj);
    // velocity of j's contact point relative to i's, spin included
    float3 rel = (xyz(vj) + cross3(xyz(wj), (-pj.w) * n)) - (xyz(vi) + cross3(xyz(wi), pi.w * n));
    float vn = dot3(rel, n);
    float fn = m_eff * (c.w0 * c.w0 * (reach - dist) - 2.f * c.zeta * c.w0 * vn);
    if (fn <= 0.f) return;
    float3 on_j = fn * n;
    float3 t = rel - vn * n;
    float vt = sqrtf(dot3(t, t));
    if (vt > 0.f) {
        float3 friction_j = (-fminf(c.mu * fn, TANGENTIAL_DAMPING * m_eff * c.w0 * vt) / vt) * t;
        on_j = on_j + friction_j;
        torque = torque + cross3(pi.w * n, (-1.f) * friction_j);
    }
    force = force - on_j;
    float3 w_rel = xyz(wj) - xyz(wi);
    float wr = sqrtf(dot3(w_rel, w_rel));
    if (wr > 0.f && c.mu_roll > 0.f) {
        float r_eff = pi.w * pj.w / reach;
        float i_eff = 0.4f * m_eff * r_eff * r_eff;
        torque = torque + (fminf(c.mu_roll * r_eff * fn, ROLLING_DAMPING * i_eff * c.w0 * wr) / wr) * w_rel;
    }
}

// The trough shell's nearest point to p (surface below the rim, rim edge above, end edges beyond).
__device__ __forceinline__ float3 from_trough(float4 p, const Contact& c)
{
    float sx, sy;
    if (p.y <= 0.f) {
        float d = sqrtf(p.x * p.x + p.y * p.y);
        if (d == 0.f) return make_float3(0.f, 0.f, c.trough_radius);
        sx = c.trough_radius * p.x / d;
        sy = c.trough_radius * p.y / d;
    } else {
        sx = p.x >= 0.f ? c.trough_radius : -c.trough_radius;
        sy = 0.f;
    }
    float sz = fminf(fmaxf(p.z, c.trough_z_min), c.trough_z_max);
    return make_float3(p.x - sx, p.y - sy, p.z - sz);
}

__device__ __forceinline__ void trough_contact(float4 p, float4 v, float4 w, const Contact& c, float3& force,
                                               float3& torque)
{
    float3 away = from_trough(p, c);
    float dist = sqrtf(dot3(away, away));
    float overlap = p.w - dist;
    if (overlap <= 0.f || dist == 0.f) return;
    float3 n = (-1.f / dist) * away;  // from the centre towards the shell
    float m = mass(p.w, c.density);
    float3 vc = xyz(v) + cross3(xyz(w), p.w * n);
    float vn = dot3(vc, n);
    float fn = m * (c.w0 * c.w0 * overlap + 2.f * c.zeta * c.w0 * vn);
    if (fn <= 0.f) return;
    float3 f = (-fn) * n;
    float3 t = vc - vn * n;
    float vt = sqrtf(dot3(t, t));
    if (vt > 0.f) {
        float3 friction = (-fminf(c.mu * fn, TANGENTIAL_DAMPING * m * c.w0 * vt) / vt) * t;
        f = f + friction;
        torque = torque + cross3(p.w * n, friction);
    }
    force = force + f;
    float wr = sqrtf(dot3(xyz(w), xyz(w)));
    if (wr > 0.f && c.mu_roll > 0.f) {
        float tr = fminf(c.mu_roll * p.w * fn, ROLLING_DAMPING * 0.4f * m * p.w * p.w * c.w0 * wr) / wr;
        torque = torque - tr * xyz(w);
    }
}

// Trough contact, then semi-implicit Euler: v += dt a, x += dt v (new v), w += dt alpha.
__device__ __forceinline__ void finish_step(float4& p, float4& v, float4& w, float3 force, float3 torque,
                                            const Contact& c)
{
    trough_contact(p, v, w, c, force, torque);
    float m = mass(p.w, c.density);
    float inv_m = 1.f / m, inv_i = 1.f / (0.4f * m * p.w * p.w);
    v.x += c.dt * force.x * inv_m;
    v.y += c.dt * (force.y * inv_m - c.gravity);
    v.z += c.dt * force.z * inv_m;
    p.x += c.dt * v.x;
    p.y += c.dt * v.y;
    p.z += c.dt * v.z;
    w.x += c.dt * torque.x * inv_i;
    w.y += c.dt * torque.y * inv_i;
    w.z += c.dt * torque.z * inv_i;
}
