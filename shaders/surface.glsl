#version 330 core
// Lit, two-sided, semi-opaque surface with world-space grid lines (trough and floor).
// FLAT_SURFACE (the floor): one plane, so its diffuse light is the same everywhere and is worked
// out per vertex, and it has no highlight; it covers most of the window, where per-pixel light
// would cost the most.

#if defined VERTEX_SHADER

in vec3 in_position;
in vec3 in_normal;

uniform mat4 u_view;
uniform mat4 u_proj;
uniform vec3 u_light_dir;     // view space, towards the light

out vec3 v_world;
#ifdef FLAT_SURFACE
flat out float v_light;
#else
out vec3 v_normal_view;
out vec3 v_pos_view;
#endif

void main() {
    vec4 p = u_view * vec4(in_position, 1.0);
    v_world = in_position;
#ifdef FLAT_SURFACE
    v_light = 0.35 + 0.65 * abs(dot(normalize(mat3(u_view) * in_normal), u_light_dir));
#else
    v_pos_view = p.xyz;
    v_normal_view = mat3(u_view) * in_normal;
#endif
    gl_Position = u_proj * p;
}

#elif defined FRAGMENT_SHADER

in vec3 v_world;
#ifdef FLAT_SURFACE
flat in float v_light;
#else
in vec3 v_normal_view;
in vec3 v_pos_view;
#endif

uniform vec4 u_color;
uniform vec3 u_light_dir;     // view space, towards the light
uniform vec3 u_grid_axes;     // which world axes carry grid lines (1 = yes)
uniform float u_grid_spacing;
uniform float u_fade_radius;  // alpha fades out beyond this distance from the world origin (0: off)

out vec4 f_color;

float grid_line(float coord) {
    // Anti-aliased line at every multiple of the spacing, about one pixel wide.
    float x = coord / u_grid_spacing;
    float w = fwidth(x);
    float dist = abs(fract(x - 0.5) - 0.5);
    return 1.0 - smoothstep(0.0, 1.5 * w, dist);
}

void main() {
#ifdef FLAT_SURFACE
    vec3 rgb = u_color.rgb * v_light;
#else
    vec3 n = normalize(v_normal_view);
    if (!gl_FrontFacing) n = -n;
    vec3 view_dir = normalize(-v_pos_view);
    float lambert = abs(dot(n, u_light_dir));
    vec3 h = normalize(u_light_dir + view_dir);
    float spec = max(dot(n, h), 0.0);
    spec *= spec; spec *= spec; spec *= spec; spec *= spec; spec *= spec;  // ^32
    vec3 rgb = u_color.rgb * (0.35 + 0.65 * lambert) + 0.15 * spec;
#endif

    float line = 0.0;
    if (u_grid_axes.x > 0.5) line = max(line, grid_line(v_world.x));
    if (u_grid_axes.y > 0.5) line = max(line, grid_line(v_world.y));
    if (u_grid_axes.z > 0.5) line = max(line, grid_line(v_world.z));
    rgb = mix(rgb, vec3(0.9, 0.92, 0.95), 0.45 * line);

    float alpha = mix(u_color.a, min(1.0, u_color.a + 0.35), line);
    if (u_fade_radius > 0.0) alpha *= 1.0 - smoothstep(0.6 * u_fade_radius, u_fade_radius, length(v_world.xz));
    f_color = vec4(rgb, alpha);
}

#endif
