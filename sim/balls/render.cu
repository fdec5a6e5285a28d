// The balls' points on the GPU, written straight into the mapped OpenGL buffers in one pass:
// positions and the quantity of the colour mode (the twin of render_cpu.py and sim/framework/points.py).
// The quantity is 32 bits per ball: speed, height (y) or partners as float bits, the CUDA block
// (thread index // block) as an integer, 0 for one colour. The viewer colours it.

#define SPEED 0
#define HEIGHT 1
#define PAIRS 2
#define UNIFORM 3
#define BLOCK_COLOURS 4

extern "C" __global__ void write_points(const float4* pos, const float4* vel, const int* partners_of, int n,
                                        int mode, int block, float4* pos_out, unsigned int* quantity_out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i];
    pos_out[i] = p;
    unsigned int q = 0u;
    if (mode == SPEED) {
        float4 v = vel[i];
        q = __float_as_uint(sqrtf(v.x * v.x + v.y * v.y + v.z * v.z));
    } else if (mode == HEIGHT) {
        q = __float_as_uint(p.y);
    } else if (mode == PAIRS) {
        q = __float_as_uint((float)partners_of[i]);
    } else if (mode == BLOCK_COLOURS) {
        q = (unsigned int)(i / block);
    }
    quantity_out[i] = q;
}
