// Planted mistake (balls proximity): the scan stops at j > 0 instead of j >= 0, an off-by-one at the
// edge: the lowest ball in z_max order is never tested, so it and all its partners miss their pair.
// The template with one edit.

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
    for (int j = i - 1; j > 0 && z_max[j] >= z_min[i]; --j) {  // WRONG: j > 0 never reaches ball 0
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
