#version 330 core
// Flat-coloured lines in world space (the outline of a 2D scene's box).

#if defined VERTEX_SHADER

in vec3 in_position;

uniform mat4 u_view;
uniform mat4 u_proj;

void main() {
    gl_Position = u_proj * (u_view * vec4(in_position, 1.0));
}

#elif defined FRAGMENT_SHADER

uniform vec4 u_color;

out vec4 f_color;

void main() {
    f_color = u_color;
}

#endif
