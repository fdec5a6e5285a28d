// The balls' render arrays on the GPU, written straight into the mapped OpenGL buffers in one
// pass: the twin of render_cpu.fill_colors (numpy) and sim/colormap.py. Speed, height (y) and
// partners are mapped onto the colour map as (value - lo) * scale, the range chosen by the scene.

#define SPEED 0
#define HEIGHT 1
#define PAIRS 2
#define UNIFORM 3
#define BLOCK_COLOURS 4

__device__ __forceinline__ float4 ramp(float value, const float* stops, int count)
{
    float v = fminf(fmaxf(isnan(value) ? 0.f : value, 0.f), 1.f) * (count - 1);
    int lo = min((int)v, count - 2);
    float frac = v - lo;
    const float* a = stops + 3 * lo;
    return make_float4(a[0] * (1.f - frac) + a[3] * frac, a[1] * (1.f - frac) + a[4] * frac,
                       a[2] * (1.f - frac) + a[5] * frac, 1.f);
}

extern "C" __global__ void write_render(const float4* pos, const float4* vel, const int* partners_of, int n,
                                        int mode, int block, float lo, float scale, const float* stops,
                                        int stop_count, const float* palette, int palette_count,
                                        const unsigned char* mismatch, float4* pos_out, float4* col_out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i];
    pos_out[i] = p;
    float4 c;
    if (mode == SPEED) {
        float4 v = vel[i];
        c = ramp((sqrtf(v.x * v.x + v.y * v.y + v.z * v.z) - lo) * scale, stops, stop_count);
    } else if (mode == HEIGHT) {
        c = ramp((p.y - lo) * scale, stops, stop_count);
    } else if (mode == PAIRS) {
        c = ramp(((float)partners_of[i] - lo) * scale, stops, stop_count);
    } else if (mode == BLOCK_COLOURS) {
        const float* rgb = palette + 3 * ((i / block) % palette_count);
        c = make_float4(rgb[0], rgb[1], rgb[2], 1.f);
    } else {
        c = make_float4(0.85f, 0.55f, 0.25f, 1.f);
    }
    if (mismatch && mismatch[i]) c = make_float4(1.f, 0.f, 0.f, 1.f);
    col_out[i] = c;
}
