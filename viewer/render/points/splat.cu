// Sphere splatting on CUDA for balls a few pixels across.
//
// The graphics pipeline of a compute GPU (H100/H200) runs on a few of its SMs, so a million
// instanced impostors are bound by vertex and primitive throughput. Here one thread per ball
// ray-casts the pixels of the same screen box that the GL impostor quad would cover, with the same
// maths as shaders/spheres.glsl, and keeps the nearest hit per pixel with a 64-bit atomicMin of
// (depth bits << 32 | RGBA8): depth is in [0, 1], so its float bits order like the depths.
// A ball whose box is wider than max_box pixels, or whose quad reaches the near plane, is appended
// to a list that GL draws as impostors; draw_cmd is that draw's DrawArraysIndirectCommand
// (count, instance count, first, base instance), its instance count zeroed before the launch.
// A ball's colour comes from its 32-bit quantity as in spheres.glsl's item_color (the colouring of
// viewer/render/points/colours.py): all ones is marked; a category id picks a palette colour; a
// value's float bits are mapped over [lo, hi] onto the 256-colour ramp, interpolated as GL's
// linear filter does.

struct Vec3 {
    float x, y, z;
};

__device__ inline Vec3 make(float x, float y, float z) { return {x, y, z}; }
__device__ inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
__device__ inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ inline Vec3 operator*(float s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
__device__ inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ inline Vec3 cross(Vec3 a, Vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
__device__ inline Vec3 normalize(Vec3 a) { return (1.0f / sqrtf(dot(a, a))) * a; }

// Is a sphere at view-space (x, z) of radius r wholly outside the side plane a x + b z <= 0?
__device__ inline bool outside(float a, float b, float x, float z, float r) {
    return a * x + b * z > r * sqrtf(a * a + b * b);
}

__device__ inline unsigned int unorm8(float v) { return __float2uint_rn(__saturatef(v) * 255.0f); }

#define MARKED 0xFFFFFFFFu
#define RAMP_SIZE 256

__device__ inline Vec3 item_color(unsigned int quantity, const float* ramp, const float* palette, int palette_size,
                                  int categorical, float lo, float hi, Vec3 marked) {
    if (quantity == MARKED) return marked;
    if (categorical) {
        const float* c = palette + 3 * (quantity % (unsigned int)palette_size);
        return make(c[0], c[1], c[2]);
    }
    float value = __uint_as_float(quantity);
    float span = hi - lo;
    float t = span > 0.0f && !isnan(value) ? fminf(fmaxf((value - lo) / span, 0.0f), 1.0f) : 0.0f;
    float x = t * (RAMP_SIZE - 1);
    int k = min((int)x, RAMP_SIZE - 2);
    float f = x - k;
    const float* a = ramp + 3 * k;
    return make(a[0] + f * (a[3] - a[0]), a[1] + f * (a[4] - a[1]), a[2] + f * (a[5] - a[2]));
}

// m0 ... m11: rows 0-2 of the world -> view matrix; p00 ... p23: the projection's entries that are not
// 0 or -1; light: view space, towards the light, normalised; max_box: the widest box side, in
// pixels, that one thread shades; min_radius: the smallest radius drawn, in pixels (0: none), as
// u_min_radius in spheres.glsl; ramp (256 x 3), palette (palette_size x 3), categorical, lo, hi and
// the marked colour: the colouring.
extern "C" __global__ void splat_balls(
    const float4* __restrict__ pos, const unsigned int* __restrict__ quantity, int n,
    float m0, float m1, float m2, float m3, float m4, float m5, float m6, float m7, float m8, float m9, float m10,
    float m11, float p00, float p02, float p11, float p12, float p22, float p23, float near,
    float lx, float ly, float lz, int width, int height, int max_box, float min_radius,
    const float* __restrict__ ramp, const float* __restrict__ palette, int palette_size, int categorical,
    float lo, float hi, float marked_r, float marked_g, float marked_b,
    unsigned long long* __restrict__ image,
    float4* __restrict__ big_pos, unsigned int* __restrict__ big_quantity, unsigned int* __restrict__ draw_cmd) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 s = pos[i];
    Vec3 c = make(m0 * s.x + m1 * s.y + m2 * s.z + m3, m4 * s.x + m5 * s.y + m6 * s.z + m7,
                  m8 * s.x + m9 * s.y + m10 * s.z + m11);
    float r = s.w;
    if (min_radius > 0.0f && c.z < 0.0f) r = fmaxf(r, min_radius * 2.0f * -c.z / (p11 * height));
    float d2 = dot(c, c);
    if (!(r > 0.0f) || d2 <= r * r * 1.0001f) return;  // degenerate, or the eye inside the ball
    // Outside the frustum's near or side planes: culled here, so that balls beside or behind the
    // eye (their quads cross the near plane) do not swell the impostor list.
    if (c.z - r > -near || outside(p00, p02 + 1.0f, c.x, c.z, r) || outside(-p00, 1.0f - p02, c.x, c.z, r) ||
        outside(p11, p12 + 1.0f, c.y, c.z, r) || outside(-p11, 1.0f - p12, c.y, c.z, r))
        return;

    // The impostor quad of spheres.glsl: tangent plane, half size from the cone of tangent rays.
    float d = sqrtf(d2);
    Vec3 w = (1.0f / d) * c;
    Vec3 ref = fabsf(w.y) < 0.99f ? make(0.0f, 1.0f, 0.0f) : make(1.0f, 0.0f, 0.0f);
    Vec3 u = normalize(cross(ref, w));
    Vec3 v = cross(w, u);
    float t = fmaxf(d - r, 1.5f * near);
    float half_size = t * r / sqrtf(d2 - r * r);
    float x_lo = 3e38f, x_hi = -3e38f, y_lo = 3e38f, y_hi = -3e38f;
    bool near_plane = false;
    for (int k = 0; k < 4; ++k) {
        Vec3 p = t * w + half_size * ((k & 1 ? 1.0f : -1.0f) * u + (k & 2 ? 1.0f : -1.0f) * v);
        near_plane |= -p.z < near;
        float inv_w = 1.0f / -p.z;
        float x = (p00 * p.x + p02 * p.z) * inv_w;
        float y = (p11 * p.y + p12 * p.z) * inv_w;
        x_lo = fminf(x_lo, x); x_hi = fmaxf(x_hi, x);
        y_lo = fminf(y_lo, y); y_hi = fmaxf(y_hi, y);
    }
    // Pixels whose centres lie in the box, clamped to the viewport.
    float half_w = 0.5f * width, half_h = 0.5f * height;
    float x0 = fmaxf(ceilf((x_lo + 1.0f) * half_w - 0.5f), 0.0f);
    float x1 = fminf(floorf((x_hi + 1.0f) * half_w - 0.5f), width - 1.0f);
    float y0 = fmaxf(ceilf((y_lo + 1.0f) * half_h - 0.5f), 0.0f);
    float y1 = fminf(floorf((y_hi + 1.0f) * half_h - 0.5f), height - 1.0f);
    if (near_plane || x1 - x0 >= max_box || y1 - y0 >= max_box) {
        unsigned int slot = atomicAdd(draw_cmd + 1, 1u);
        big_pos[slot] = s;
        big_quantity[slot] = quantity[i];
        return;
    }
    if (x0 > x1 || y0 > y1) return;  // off screen, or between pixel centres

    Vec3 light = make(lx, ly, lz);
    Vec3 color = item_color(quantity[i], ramp, palette, palette_size, categorical, lo, hi,
                            make(marked_r, marked_g, marked_b));
    for (int py = (int)y0; py <= (int)y1; ++py) {
        float ray_y = (((py + 0.5f) / half_h - 1.0f) + p12) / p11;
        for (int px = (int)x0; px <= (int)x1; ++px) {
            float ray_x = (((px + 0.5f) / half_w - 1.0f) + p02) / p00;
            Vec3 dir = normalize(make(ray_x, ray_y, -1.0f));
            float b = dot(dir, c);
            Vec3 off_ray = c - b * dir;  // as in spheres.glsl: no difference of large squares
            float disc = r * r - dot(off_ray, off_ray);
            if (disc < 0.0f) continue;
            float h = sqrtf(disc);
            Vec3 hit = (b - h) * dir;
            float ndc_z = (p22 * hit.z + p23) / -hit.z;
            float depth = 0.5f * ndc_z + 0.5f;
            if (ndc_z < -1.0f || depth >= 1.0f) continue;  // cut by the near or the far plane

            Vec3 normal = (-1.0f / r) * (off_ray + h * dir);
            float lambert = fmaxf(dot(normal, light), 0.0f);
            float spec = fmaxf(dot(normal, normalize(light - dir)), 0.0f);
            spec *= spec; spec *= spec; spec *= spec; spec *= spec; spec *= spec;  // ^32
            float shade = 0.22f + 0.78f * lambert, gloss = 0.35f * spec;
            unsigned int packed = unorm8(color.x * shade + gloss) | unorm8(color.y * shade + gloss) << 8 |
                                  unorm8(color.z * shade + gloss) << 16 | 255u << 24;
            atomicMin(image + (size_t)py * width + px,
                      (unsigned long long)__float_as_uint(depth) << 32 | packed);
        }
    }
}
