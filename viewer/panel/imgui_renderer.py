"""Draw ``imgui.get_draw_data()`` with moderngl, including Dear ImGui 1.92's texture protocol.

Since 1.92 the renderer owns the font atlas texture: each frame ImGui lists the textures it
wants created, updated or destroyed in ``draw_data.textures``, and the renderer answers by
setting each texture's id and status. The ImGui texture id is the GL texture name.
"""

from __future__ import annotations

import ctypes

import moderngl
import numpy as np
from imgui_bundle import imgui

from viewer.render.shaders import load_program

_Status = imgui.ImTextureStatus


def _ortho(left: float, right: float, top: float, bottom: float) -> bytes:
    m = np.array(
        [
            [2.0 / (right - left), 0, 0, (right + left) / (left - right)],
            [0, 2.0 / (top - bottom), 0, (top + bottom) / (bottom - top)],
            [0, 0, -1.0, 0],
            [0, 0, 0, 1.0],
        ],
        dtype="f4",
    )
    return m.T.tobytes()  # GL wants column-major


def _view_of(vector, item_size: int) -> memoryview:
    """The bytes of an ImVector without copying them."""
    nbytes = vector.size() * item_size
    return memoryview((ctypes.c_char * nbytes).from_address(vector.data_address())).cast("B")


class ImGuiRenderer:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.program = load_program(ctx, "imgui")
        self.program["u_texture"].value = 0
        self._vbo = ctx.buffer(reserve=64 * 1024, dynamic=True)
        self._ibo = ctx.buffer(reserve=32 * 1024, dynamic=True)
        self._vao = ctx.vertex_array(
            self.program,
            [(self._vbo, "2f 2f 4f1", "in_pos", "in_uv", "in_color")],
            index_buffer=self._ibo,
            index_element_size=imgui.INDEX_SIZE,
        )
        self.textures: dict[int, moderngl.Texture] = {}
        io = imgui.get_io()
        io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
        max_size = int(ctx.info["GL_MAX_TEXTURE_SIZE"])
        platform_io = imgui.get_platform_io()
        platform_io.renderer_texture_max_width = max_size
        platform_io.renderer_texture_max_height = max_size

    # --- textures ----------------------------------------------------------------------
    def update_textures(self, textures) -> None:
        for tex in textures:
            if tex.status == _Status.want_create:
                self._create_texture(tex)
            elif tex.status == _Status.want_updates:
                self._update_texture(tex)
            elif tex.status == _Status.want_destroy:
                self._destroy_texture(tex)

    def _create_texture(self, tex) -> None:
        components = 4 if tex.format == imgui.ImTextureFormat.rgba32 else 1
        pixels = tex.get_pixels_array()
        texture = self.ctx.texture((tex.width, tex.height), components, pixels.tobytes())
        if components == 1:
            texture.swizzle = "111R"  # alpha-only atlas: white with coverage in alpha
        texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
        texture.repeat_x = texture.repeat_y = False
        self.textures[texture.glo] = texture
        tex.set_tex_id(texture.glo)
        tex.set_status(_Status.ok)

    def _update_texture(self, tex) -> None:
        texture = self.textures.get(int(tex.tex_id))
        if texture is None:  # not ours (or lost): upload afresh
            tex.set_tex_id(0)
            self._create_texture(tex)
            return
        bpp = tex.bytes_per_pixel
        pixels = tex.get_pixels_array().reshape(tex.height, tex.width, bpp)
        for r in tex.updates:
            block = np.ascontiguousarray(pixels[r.y : r.y + r.h, r.x : r.x + r.w])
            texture.write(block.tobytes(), viewport=(r.x, r.y, r.w, r.h), alignment=1)
        tex.set_status(_Status.ok)

    def _destroy_texture(self, tex) -> None:
        texture = self.textures.pop(int(tex.tex_id), None)
        if texture is not None:
            texture.release()
        tex.set_tex_id(0)
        tex.set_status(_Status.destroyed)

    # --- drawing -----------------------------------------------------------------------
    def render(self, draw_data, target: moderngl.Framebuffer) -> None:
        """Draw over ``target`` (already holding the 3D view); call after ``imgui.render()``."""
        self.update_textures(draw_data.textures)
        scale_x, scale_y = draw_data.framebuffer_scale.x, draw_data.framebuffer_scale.y
        pos_x, pos_y = draw_data.display_pos.x, draw_data.display_pos.y
        disp_w, disp_h = draw_data.display_size.x, draw_data.display_size.y
        fb_w, fb_h = int(disp_w * scale_x), int(disp_h * scale_y)
        if fb_w <= 0 or fb_h <= 0:
            return
        ctx = self.ctx
        target.use()
        target.viewport = (0, 0, fb_w, fb_h)
        ctx.enable(moderngl.BLEND)
        ctx.blend_equation = moderngl.FUNC_ADD
        ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA, moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        self.program["u_proj"].write(_ortho(pos_x, pos_x + disp_w, pos_y, pos_y + disp_h))

        for cmd_list in draw_data.cmd_lists:
            vertices = _view_of(cmd_list.vtx_buffer, imgui.VERTEX_SIZE)
            indices = _view_of(cmd_list.idx_buffer, imgui.INDEX_SIZE)
            if len(vertices) > self._vbo.size:
                self._vbo.orphan(2 * len(vertices))
            if len(indices) > self._ibo.size:
                self._ibo.orphan(2 * len(indices))
            self._vbo.write(vertices)
            self._ibo.write(indices)
            for cmd in cmd_list.cmd_buffer:
                x0, y0, x1, y1 = cmd.clip_rect.x, cmd.clip_rect.y, cmd.clip_rect.z, cmd.clip_rect.w
                x0, x1 = max((x0 - pos_x) * scale_x, 0.0), min((x1 - pos_x) * scale_x, fb_w)
                y0, y1 = max((y0 - pos_y) * scale_y, 0.0), min((y1 - pos_y) * scale_y, fb_h)
                if x1 <= x0 or y1 <= y0 or cmd.elem_count == 0:
                    continue
                texture = self.textures.get(int(cmd.tex_ref.get_tex_id()))
                if texture is None:
                    continue
                texture.use(0)
                # GL scissor boxes start at the bottom-left corner.
                target.scissor = (int(x0), int(fb_h - y1), int(x1 - x0), int(y1 - y0))
                self._vao.render(moderngl.TRIANGLES, vertices=cmd.elem_count, first=cmd.idx_offset)
        target.scissor = None
        ctx.disable(moderngl.BLEND)

    def release(self) -> None:
        """Free GL objects and tell ImGui its textures are gone (so a new renderer recreates them)."""
        for tex in imgui.get_platform_io().textures:
            if int(tex.tex_id) in self.textures:
                self._destroy_texture(tex)
        for texture in self.textures.values():
            texture.release()
        self.textures.clear()
        imgui.get_io().backend_flags &= ~imgui.BackendFlags_.renderer_has_textures
        for obj in (self._vao, self._vbo, self._ibo, self.program):
            obj.release()
