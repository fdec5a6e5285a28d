// Picking on the device: the first sphere a ray meets, over the (x, y, z, radius) float4 items the
// device wrote into the renderer's GL buffer. The twin is viewer/pick/ray.py's ray_hit: the same
// maths in double (built with --fmad=false, so every product and sum rounds as numba's does) and the
// same answer, the nearest hit in front of the origin, ties to the lowest index.
//
// Two launches over the items: nearest_hit keeps the smallest hit distance with a 64-bit atomicMin of
// its bits (a distance is >= 0, so its bits order like the distances); first_of_nearest recomputes
// each hit (bit for bit the same) and keeps the lowest index whose hit equals it. best[0] and best[1]
// start at all ones: nothing hit.

__device__ __forceinline__ bool hit_distance(float4 s, double ox, double oy, double oz, double dx, double dy,
                                             double dz, double* t) {
    const double r = s.w;
    if (!(r > 0.0)) return false;
    const double px = s.x - ox, py = s.y - oy, pz = s.z - oz;
    const double along = px * dx + py * dy + pz * dz;
    // The perpendicular offset itself, not |p|^2 - along^2: that cancels badly far from the origin.
    const double qx = px - along * dx, qy = py - along * dy, qz = pz - along * dz;
    const double d2 = qx * qx + qy * qy + qz * qz;
    if (d2 > r * r) return false;
    const double half_chord = sqrt(r * r - d2);
    double hit = along - half_chord;
    if (hit < 0.0) hit = along + half_chord;  // from inside a sphere: its far side
    *t = hit;
    return hit >= 0.0;
}

extern "C" __global__ void nearest_hit(const float4* __restrict__ spheres, int n, double ox, double oy, double oz,
                                       double dx, double dy, double dz, unsigned long long* best) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double t;
    if (i < n && hit_distance(spheres[i], ox, oy, oz, dx, dy, dz, &t))
        atomicMin(best, (unsigned long long)__double_as_longlong(t));
}

extern "C" __global__ void first_of_nearest(const float4* __restrict__ spheres, int n, double ox, double oy,
                                            double oz, double dx, double dy, double dz,
                                            unsigned long long* best) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double t;
    if (i < n && hit_distance(spheres[i], ox, oy, oz, dx, dy, dz, &t) &&
        (unsigned long long)__double_as_longlong(t) == best[0])
        atomicMin(best + 1, (unsigned long long)i);
}
