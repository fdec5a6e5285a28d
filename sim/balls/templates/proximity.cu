// Your own proximity search: the `proximity` stage of the balls scene (the z-sorted sweep).
//
// A pair list serves the next 6 steps, so it must hold every pair of balls that may touch within
// t = 6 dt. The balls come sorted by z_max = (z + |vz| t) + r ascending (z_min = (z - |vz| t) - r), so
// the balls whose z range can reach ball i lie just below it: scan j = i-1, i-2, ... while
// z_max[j] >= z_min[i], and stop at the first j whose z_max is below. Each scanned j is one test:
//     |p_j - p_i| - t * |v_j - v_i| <= margin * (r_j + r_i)      (float, each operation rounded on its own)
// A pair that passes goes into both balls' partner lists.
//
// Parameters:
//   pos       the balls in z_max order: x, y, z and the radius in w
//   vel       their velocities: x, y, z (w unused)
//   z_max     each ball's z_max (ascending), z_min its z_min
//   n         how many balls
//   t         the lifetime of a pair list (6 dt)
//   margin    1.1: the reach in radii
//   k         each ball's list capacity
//   count     partners found per ball; zero before the launch. Keep counting past k (the host sees
//             that a list overflowed), but write only the first k
//   partners  ball i's partners at partners[i * k .. i * k + count[i] - 1], in any order
//
// Launch rule: one thread per ball, grid = ceil(n / block) blocks of `block` threads (default 128).
// Compared with the CPU twin's sweep as sets: each ball's partners, in any order.
//
// This is the plainest way (the built-in `global` sweep): plain loads from global memory. The built-in
// variants read through the texture cache, stage the scanned balls in shared memory, or bin the balls
// into a grid of cells.

__device__ void add_partner(int* count, int* partners, int k, int ball, int other)
{
    int slot = atomicAdd(&count[ball], 1);  // several threads may add to one ball's list at once
    if (slot < k) partners[ball * k + slot] = other;
}

extern "C" __global__ void proximity(const float4* pos, const float4* vel, const float* z_max, const float* z_min,
                                     int n, float t, float margin, int k, int* count, int* partners)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  // the last block's spare threads have no ball
    float4 pi = pos[i], vi = vel[i];
    for (int j = i - 1; j >= 0 && z_max[j] >= z_min[i]; --j) {
        float4 pj = pos[j], vj = vel[j];
        float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
        float ux = vj.x - vi.x, uy = vj.y - vi.y, uz = vj.z - vi.z;
        float dist = sqrtf(dx * dx + dy * dy + dz * dz);
        float speed = sqrtf(ux * ux + uy * uy + uz * uz);
        if (dist - t * speed <= margin * (pj.w + pi.w)) {
            add_partner(count, partners, k, i, j);
            add_partner(count, partners, k, j, i);
        }
    }
}
