#version 330 core
// Ray-cast sphere impostors: one camera-facing quad per ball, one instance per ball.
//
// The quad lies in the plane tangent to the sphere at its point nearest the eye, so along every
// pixel's ray the sphere surface is at or behind the quad: the written depth is never nearer than
// the rasterised one, which GL_ARB_conservative_depth (depth_greater) lets the GPU use to reject
// hidden fragments before shading them.

#if defined VERTEX_SHADER

in vec2 in_corner;  // quad corner in [-1, 1]^2
in vec4 in_sphere;  // per instance: centre xyz (world), radius w
in uint in_quantity;  // per instance: a value's float bits, or a category id; all ones: marked

uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_near;
uniform float u_min_radius;      // pixels on screen; 0 draws every ball at its own size
uniform float u_viewport_height;  // pixels
// The colouring (viewer/render/points/colours.py; splat.cu colours the same way).
uniform sampler2D u_colormap;  // 256 x 1 RGB ramp, the field's
uniform sampler2D u_palette;   // k x 1 RGB, one texel per category
uniform bool u_categorical;
uniform vec2 u_range;          // values mapped to the ends of the ramp
uniform vec3 u_marked_color;   // items verification marked

out vec3 v_ray;                 // view-space point on the quad: the ray direction through this pixel
flat out vec3 v_center;         // view-space sphere centre
flat out float v_radius;
flat out vec3 v_color;

const uint MARKED = 0xFFFFFFFFu;

vec3 item_color(uint quantity) {
    if (quantity == MARKED) return u_marked_color;
    if (u_categorical) {
        uint colours = uint(textureSize(u_palette, 0).x);
        return texelFetch(u_palette, ivec2(int(quantity % colours), 0), 0).rgb;
    }
    float value = uintBitsToFloat(quantity);
    float span = u_range.y - u_range.x;
    float t = span > 0.0 && !isnan(value) ? clamp((value - u_range.x) / span, 0.0, 1.0) : 0.0;
    return textureLod(u_colormap, vec2((t * 255.0 + 0.5) / 256.0, 0.5), 0.0).rgb;
}

void main() {
    vec3 c = (u_view * vec4(in_sphere.xyz, 1.0)).xyz;
    float r = in_sphere.w;
    if (u_min_radius > 0.0 && c.z < 0.0) {
        // At least u_min_radius pixels: a ball projects to r * P11 / depth * height / 2 pixels.
        r = max(r, u_min_radius * 2.0 * -c.z / (u_proj[1][1] * u_viewport_height));
    }
    float d2 = dot(c, c);
    v_center = c;
    v_radius = r;
    v_color = item_color(in_quantity);
    // Camera inside (or on) the sphere, or a degenerate ball: emit a zero-area quad.
    if (r <= 0.0 || d2 <= r * r * 1.0001) {
        v_ray = vec3(0.0, 0.0, -1.0);
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        return;
    }
    float d = sqrt(d2);
    vec3 w = c / d;
    vec3 ref_axis = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(ref_axis, w));
    vec3 v = cross(w, u);
    // Plane distance: tangent plane, but kept beyond the near plane so the quad is never clipped
    // away while the camera is within a radius of the surface.
    float t = max(d - r, 1.5 * u_near);
    // Half size at distance t of the cone of rays tangent to the sphere: its projection bounds
    // the silhouette under perspective.
    float half_size = t * r / sqrt(d2 - r * r);
    vec3 p = t * w + half_size * (in_corner.x * u + in_corner.y * v);
    v_ray = p;
    gl_Position = u_proj * vec4(p, 1.0);
}

#elif defined FRAGMENT_SHADER

#extension GL_ARB_conservative_depth : enable
#ifdef GL_ARB_conservative_depth
layout(depth_greater) out float gl_FragDepth;
#endif

in vec3 v_ray;
flat in vec3 v_center;
flat in float v_radius;
flat in vec3 v_color;

uniform mat4 u_proj;
uniform vec3 u_light_dir;  // view space, towards the light, normalised

out vec4 f_color;

void main() {
    vec3 dir = normalize(v_ray);
    float b = dot(dir, v_center);
    // From the centre's offset off the ray, not b^2 - (|c|^2 - r^2): far away that difference of
    // large squares loses every digit of a small ball, and the shading turns to noise.
    vec3 off_ray = v_center - b * dir;
    float disc = v_radius * v_radius - dot(off_ray, off_ray);
    if (disc < 0.0) discard;
    float h = sqrt(disc);
    vec3 hit = (b - h) * dir;
    // Only z of the projection matters for depth: ndc_z = (P22 z + P32) / -z.
    float ndc_z = (u_proj[2][2] * hit.z + u_proj[3][2]) / -hit.z;
    if (ndc_z < -1.0) discard;  // the front of the ball is cut by the near plane
    gl_FragDepth = 0.5 * ndc_z + 0.5;

    vec3 n = -(off_ray + h * dir) / v_radius;  // (hit - centre) / r without the cancellation
    float lambert = max(dot(n, u_light_dir), 0.0);
    float spec = max(dot(n, normalize(u_light_dir - dir)), 0.0);
    spec *= spec; spec *= spec; spec *= spec; spec *= spec; spec *= spec;  // ^32
    f_color = vec4(v_color * (0.22 + 0.78 * lambert) + 0.35 * spec, 1.0);
}

#endif
