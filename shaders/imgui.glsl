#version 330 core
// Dear ImGui draw lists: 2D vertices in display pixels, a texture and a vertex colour.

#if defined VERTEX_SHADER

in vec2 in_pos;
in vec2 in_uv;
in vec4 in_color;

uniform mat4 u_proj;

out vec2 v_uv;
out vec4 v_color;

void main() {
    v_uv = in_uv;
    v_color = in_color;
    gl_Position = u_proj * vec4(in_pos, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

in vec2 v_uv;
in vec4 v_color;

uniform sampler2D u_texture;

out vec4 f_color;

void main() {
    f_color = v_color * texture(u_texture, v_uv);
}

#endif
