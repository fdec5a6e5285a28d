#version 330 core
// The id pass of picking: which item does the pointer's ray hit first? Every item is one point; a
// point whose sphere (x, y, z, radius) the ray meets lands on the single pixel of a 1x1 target at
// the depth of the hit, carrying its index + 1 in RGBA8 (exact for any 32-bit index); the depth
// test keeps the nearest. Misses are placed outside the clip volume. 0 in the pixel: nothing hit.

#if defined VERTEX_SHADER

in vec4 in_sphere;

uniform vec3 u_origin;  // the ray, in world space
uniform vec3 u_dir;     // unit length
uniform float u_far;    // hits are ordered over [0, u_far]

flat out uint v_id;

void main() {
    v_id = uint(gl_VertexID) + 1u;
    vec3 oc = in_sphere.xyz - u_origin;
    float t = dot(oc, u_dir);
    float r2 = in_sphere.w * in_sphere.w;
    vec3 perp = oc - t * u_dir;  // not |oc|^2 - t^2: that cancels badly far from the origin
    float d2 = dot(perp, perp);
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);  // culled unless hit
    if (in_sphere.w > 0.0 && d2 <= r2) {
        float half_chord = sqrt(r2 - d2);
        float hit = t - half_chord >= 0.0 ? t - half_chord : t + half_chord;  // inside a sphere: its far side
        if (hit >= 0.0) {
            gl_Position = vec4(0.0, 0.0, clamp(hit / u_far, 0.0, 1.0) * 2.0 - 1.0, 1.0);
        }
    }
}

#elif defined FRAGMENT_SHADER

flat in uint v_id;

out vec4 f_id;

void main() {
    f_id = vec4(uvec4(v_id, v_id >> 8u, v_id >> 16u, v_id >> 24u) & 255u) / 255.0;
}

#endif
