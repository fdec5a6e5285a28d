#version 330 core
#ifdef FIELD_STORAGE
#extension GL_ARB_shader_storage_buffer_object : require
#endif
// A 2D scalar field over its extent at z = 0, one float32 a cell (nearest), coloured through a colour
// map: read from the storage buffer the values were written to (FIELD_STORAGE), else from their copy
// in an R32F texture; NaN in the highlight colour; faint cell edges once cells are large on screen;
// in block-colour mode the tiles a launch covers the field with, and their halos, drawn over it.

#if defined VERTEX_SHADER

in vec3 in_position;
in vec2 in_uv;

uniform mat4 u_view;
uniform mat4 u_proj;

out vec2 v_uv;

void main() {
    v_uv = in_uv;
    gl_Position = u_proj * (u_view * vec4(in_position, 1.0));
}

#elif defined FRAGMENT_SHADER

in vec2 v_uv;

#ifdef FIELD_STORAGE
layout(std430) readonly buffer Field {
    float values[];  // row after row, row 0 at the bottom
};
#else
uniform sampler2D u_field;     // R32F, (columns, rows), row 0 at the bottom
#endif
uniform sampler2D u_colormap;  // 256 x 1 RGB ramp
uniform vec2 u_range;          // values mapped to the ends of the ramp
uniform vec3 u_highlight;      // NaN cells
uniform vec2 u_shape;          // columns, rows
uniform bool u_tiles;
uniform vec2 u_tile_size;      // cells per tile (columns, rows)
uniform vec2 u_tile_origin;    // the first tile's corner, in cells
uniform float u_halo;          // cells each tile reads around itself
uniform vec3 u_tile_color;
uniform vec3 u_halo_color;

out vec4 f_color;

const float CELL_EDGES_FROM = 12.0;  // pixels per cell from which cell edges show

// The value of the cell under the fragment: the texel a nearest texture lookup takes.
float field_value(vec2 cell) {
#ifdef FIELD_STORAGE
    ivec2 at = clamp(ivec2(floor(cell)), ivec2(0), ivec2(u_shape) - 1);
    return values[at.y * int(u_shape.x) + at.x];
#else
    return texture(u_field, v_uv).r;
#endif
}

void main() {
    vec2 cell = v_uv * u_shape;
    vec2 cells_per_pixel = max(fwidth(cell), vec2(1e-6));
    float value = field_value(cell);
    vec3 colour;
    if (isnan(value) || isinf(value)) {  // verification's marks, and a user's NaN or inf: no place on the scale
        colour = u_highlight;
    } else {
        float span = u_range.y - u_range.x;
        float t = span > 0.0 ? clamp((value - u_range.x) / span, 0.0, 1.0) : 0.0;
        colour = texture(u_colormap, vec2((t * 255.0 + 0.5) / 256.0, 0.5)).rgb;
    }
    if (max(cells_per_pixel.x, cells_per_pixel.y) < 1.0 / CELL_EDGES_FROM) {
        vec2 f = fract(cell);
        vec2 pixels = min(f, 1.0 - f) / cells_per_pixel;
        if (min(pixels.x, pixels.y) < 0.5) colour *= 0.8;
    }
    if (u_tiles) {
        vec2 rel = cell - u_tile_origin;
        vec2 index = floor(rel);
        vec2 within = index - u_tile_size * floor(index / u_tile_size);  // the cell's place in its tile
        bool in_halo = any(lessThan(within, vec2(u_halo))) || any(greaterThanEqual(within, u_tile_size - u_halo));
        if (u_halo > 0.0 && in_halo) colour = mix(colour, u_halo_color, 0.4);  // read by a neighbour tile too
        vec2 f = fract(rel / u_tile_size);
        vec2 pixels = min(f, 1.0 - f) * u_tile_size / cells_per_pixel;  // to the nearest tile edge
        if (min(pixels.x, pixels.y) < 0.75) colour = u_tile_color;
    }
    f_color = vec4(colour, 1.0);
}

#endif
