// One ball's description gathered on the device (sim/balls/items.py: BallInspector.prefetch), so that
// the viewer's tooltip costs one launch and one 16-byte-aligned copy, read a frame later, instead of a
// host wait per value. Its twin is describe's host path, which reads the same values from the host
// state; tests/test_picking.py compares the two tooltips.
//
// out, as 32-bit words: [0] the partner count, [1] the ball's id, [2..5] its pos (x, y, z, radius),
// [6..9] vel (vx, vy, vz, spin x), [10..11] spin (y, z); then for each partner j below
// min(count, capacity): [12 + 5j] its id, [13 + 5j .. 16 + 5j] its pos. Partner j of ball i is
// partners[j * stride + i] (the proximity pass's layout).

#define HEAD 12
#define PER_PARTNER 5

extern "C" __global__ void gather_ball(const float4* __restrict__ pos, const float4* __restrict__ vel,
                                       const float2* __restrict__ spin_yz, const int* __restrict__ ids,
                                       const int* __restrict__ count, const int* __restrict__ partners,
                                       long long stride, int capacity, int item, float* __restrict__ out) {
    const int m = min(count[item], capacity);
    if (threadIdx.x == 0) {
        const float4 p = pos[item], v = vel[item];
        const float2 s = spin_yz[item];
        out[0] = __int_as_float(count[item]);
        out[1] = __int_as_float(ids[item]);
        out[2] = p.x; out[3] = p.y; out[4] = p.z; out[5] = p.w;
        out[6] = v.x; out[7] = v.y; out[8] = v.z; out[9] = v.w;
        out[10] = s.x; out[11] = s.y;
    }
    for (int j = threadIdx.x; j < m; j += blockDim.x) {
        const int other = partners[j * stride + item];
        const float4 p = pos[other];
        float* at = out + HEAD + PER_PARTNER * j;
        at[0] = __int_as_float(ids[other]);
        at[1] = p.x; at[2] = p.y; at[3] = p.z; at[4] = p.w;
    }
}
