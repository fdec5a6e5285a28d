#version 330 core
#extension GL_ARB_shader_storage_buffer_object : require
// Shows the CUDA splat image (viewer/splat.cu) with its depth, read straight from the buffer CUDA
// wrote: per pixel the nearest ball's RGBA8 colour (x) and depth bits (y), all ones where no ball
// landed.

#if defined VERTEX_SHADER

void main() {
    // One triangle over the whole viewport, from the vertex id alone.
    vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    gl_Position = vec4(2.0 * p - 1.0, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

layout(std430) readonly buffer Image {
    uvec2 pixels[];  // rows from the bottom, u_width wide
};

uniform int u_width;

out vec4 f_color;

void main() {
    ivec2 at = ivec2(gl_FragCoord.xy);
    uvec2 texel = pixels[at.y * u_width + at.x];
    if (texel.y == 0xFFFFFFFFu) discard;
    gl_FragDepth = uintBitsToFloat(texel.y);
    f_color = vec4((uvec4(texel.x) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu) / 255.0;
}

#endif
