// A proximity source that does not compile: the GPU backend must name this file and line.
extern "C" __global__ void sweep(float* x)
{
    x[threadIdx.x] = undefined_name;
}
